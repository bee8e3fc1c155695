/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief A port for the core's tests and the fuzzer: a clock that advances a fixed step per
 * reading, recorded trigger edges, replies captured in memory, a small arena, and test ops
 * that count their runs.
 */
#ifndef ER_PORT_FAKE_H_
#define ER_PORT_FAKE_H_

#include <stddef.h>
#include <stdint.h>

#include "er_registry.h"

#define ER_FAKE_ARENA_BYTES (64u * 1024u)
#define ER_FAKE_OUT_BYTES (64u * 1024u)
#define ER_FAKE_EDGES_MAX 64

struct er_fake_edge_s {
	int level;
	int accel;
	uint32_t runs;      /**< er_fake.runs when the edge happened */
	uint64_t since_run; /**< clock ticks since the last run of a test op began */
	int quiet;          /**< inside er_port_quiet_begin() .. er_port_quiet_end() */
};

struct er_fake_s {
	uint64_t now;       /**< the clock: cycles and ns alike */
	uint64_t tick;      /**< what every reading of the clock adds */
	uint32_t runs;      /**< runs of the test ops since the last prep */
	uint64_t run_at;    /**< the clock when the last run of a test op began */
	uint32_t run_limit; /**< test ops fail with -ECANCELED beyond this many runs */
	uint32_t releases;  /**< calls of a test op's release */
	int init_status;    /**< what er_port_info() reports as the port's start-up result */
	int clock_status;   /**< what er_port_set_clock() returns when not 0 (the clock stays) */
	int quiet;          /**< depth of er_port_quiet_begin() calls not yet ended */
	uint32_t loud_runs; /**< runs of the test ops outside a quiet span */
	uint32_t quiet_idles; /**< er_port_idle_ms() calls inside a quiet span */
	struct er_fake_edge_s edges[ER_FAKE_EDGES_MAX];
	size_t n_edges;
	char out[ER_FAKE_OUT_BYTES + 1]; /**< replies, NUL-terminated */
	size_t out_len;
};

extern struct er_fake_s er_fake;

/** The test ops (count, sized, curvy, broken-selftest, fails-at-3, greedy, no-memory). */
extern const struct er_registry_s er_fake_registry;

/** @brief Reset the clock (64 MHz, levels 16 and 64 MHz), counters, edges and replies. */
void er_fake_reset(void);

/** @brief Until the next er_fake_reset(), the port offers no clock levels (as the host's). */
void er_fake_fixed_clock(void);

#endif /* ER_PORT_FAKE_H_ */
