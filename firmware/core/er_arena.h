/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * @brief A bump allocator over one static buffer given by the port.
 *
 * @c prep takes its buffers from here; the batch runner never allocates. The arena is reset
 * before every @c prep.
 */
#ifndef ER_ARENA_H_
#define ER_ARENA_H_

#include <stddef.h>
#include <stdint.h>

struct er_arena_s {
	uint8_t *base;
	size_t size;
	size_t used;
};

/** @brief Start an arena over @p size bytes at @p base. */
void er_arena_init(struct er_arena_s *arena, void *base, size_t size);

/** @brief Forget every allocation. */
void er_arena_reset(struct er_arena_s *arena);

/**
 * @brief Take @p len bytes aligned to @p align (a power of two).
 * @return the memory, or NULL when the arena is exhausted
 */
void *er_arena_alloc(struct er_arena_s *arena, size_t len, size_t align);

#endif /* ER_ARENA_H_ */
