/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PPK2 word decoding kernel for energyrig.instruments.ppk2.decode.
 *
 * One pass over a block of 4-byte little-endian PPK2 words writes, per sample, the current
 * in amperes (the same double-precision arithmetic, in the same order, as ppk2-api's
 * PPK2_API.get_adc_result), the logic byte D0..D7, the raw range code, a saturation flag,
 * a floor flag (ADC code 0 in range 0) and a corrupt flag, and records gaps of the 6-bit
 * sample counter. A word is corrupt when no healthy PPK2 sends it:
 *
 *   - the unused bit 17 set, or a range code above 4;
 *   - a counter that skips and comes back on the next word of the block;
 *   - a one-sample excursion of the logic byte (both neighbours equal, the sample
 *     different), or of the raw range code: a code outside the span of its neighbours'
 *     (above both or below both; equal neighbours span one code). The automatic ranging
 *     holds a range for several samples: on a step it passes through the ranges between,
 *     it does not visit one for a sample and come back, at a trigger's edge (where the
 *     neighbours' ranges differ) as anywhere else;
 *   - a one-sample jump within one range (range codes above 4 read as 4) by more than the
 *     range's jump limit, both neighbours within a tenth of that limit of each other.
 *
 * A sample is checked when the next one is decoded: the kernel keeps the last two samples
 * from one call to the next, so the checks run across chunks, but not across a gap of the
 * counter or a loss the decoder reports (`lost`: the two samples beside it are not
 * neighbours). A chunk's first word checks the last sample of the chunk before, which is no
 * longer in the outputs: `marked_before` says whether it is corrupt. The outputs are
 * preallocated by the caller (numpy arrays through the buffer protocol); nothing is
 * allocated and the GIL is released while the block is decoded.
 *
 * Speed: a healthy stream holds its logic byte and range for many samples, its counter
 * steps by one and its current moves by less than the jump limit from sample to sample;
 * along such a run no check can flag anything. Runs are decoded by er_fast_run, vectorised
 * (one range, so no table look-up; AVX2 where the CPU has it); each event and the few
 * samples after it go through the exact per-sample path, which alone flags and records
 * gaps. The flags are the per-sample path's bit for bit.
 *
 * Word: bits 0-13 ADC code, 14-16 current range (5..7 are treated as 4, as ppk2-api does),
 * 18-23 sample counter, 24-31 logic D0..D7.
 *
 * Bit-exact agreement with Python needs every product and sum rounded separately: the
 * build passes -std=c11 and -ffp-contract=off so no multiply-add is fused.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ER_N_RANGES 5
#define ER_N_RANGE_CODES 8
#define ER_N_PARAMS 6
#define ER_ADC_MASK 0x3fffu
#define ER_ADC_FULL_SCALE 0x3fffu
#define ER_TOP_RANGE 4
#define ER_COUNTER_MASK 0x3f
#define ER_UNUSED_BIT (1u << 17)

/** Conversion constants of one current range, precomputed in Python. */
typedef struct {
	double o;  /**< ADC offset O (codes x4) */
	double k;  /**< adc_mult / R (A per code x4, before gain) */
	double gs; /**< quadratic gain GS */
	double gi; /**< linear gain GI */
	double ug; /**< user gain UG */
	double c;  /**< S * (vdd / 1000) + I, A */
} er_range_s;

/** ppk2-api's spike filter: its constants and its state. */
typedef struct {
	double alpha;
	double alpha5;
	int samples;
	int have_avg;
	double rolling_avg;
	double rolling_avg4;
	int prev_range; /* -1 before the first sample */
	int consecutive;
	int after_spike;
} er_spike_s;

/** The jump check's limits of one range code (codes above 4 carry range 4's). */
typedef struct {
	double jump;    /**< a step from both neighbours above this is a jump, A */
	double settle;  /**< jump / 10: the neighbours must be closer than this, A */
	int range;      /**< the range the code reads as, 0..4 */
} er_limit_s;

/** What the neighbour checks need of one decoded sample. */
typedef struct {
	double amps;
	double jump; /* the jump limit of its range, A */
	int key;     /* logic << 8 | raw range code 0..7 */
} er_sample_s;

typedef struct {
	PyObject_HEAD
	er_range_s tab[ER_N_RANGE_CODES]; /* indexed by the raw 3-bit range code */
	er_limit_s lim[ER_N_RANGE_CODES]; /* indexed by the raw 3-bit range code */
	int spike_filter;
	er_spike_s spike; /* carried from one block to the next */
	int prev_counter; /* -1 before the first sample */
	/* The last two samples decoded, `known` of them since the start or the last loss (at
	 * most 2): the neighbours before the next word, carried from one call to the next. */
	er_sample_s before, mid;
	int known;
	int marked_before; /* the last call found the sample before its `at` 0 corrupt */
	long long fast_samples; /* samples decoded by er_fast_run */
} er_kernel_s;

/** Output buffers of one chunk; a decode call writes them from index `at`. */
typedef struct {
	Py_ssize_t at;
	double *current;
	uint8_t *logic;
	uint8_t *saturated;
	uint8_t *range;
	uint8_t *floor;
	uint8_t *corrupt;
	int64_t *gaps; /* (gap_cap, 2): position in the chunk, samples lost */
	Py_ssize_t gap_cap;
} er_out_s;

static inline uint32_t er_load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

/*
 * ppk2-api's spike filter, state for state: exponential averages of every sample, and for
 * `spike_samples` samples after a range change the average replaces the sample.
 */
static inline double er_spike_filter(er_spike_s *s, int range, double adc)
{
	double prev_avg = s->rolling_avg;
	double prev_avg4 = s->rolling_avg4;

	if (!s->have_avg) {
		s->rolling_avg = adc;
		s->rolling_avg4 = adc;
		s->have_avg = 1;
	} else {
		s->rolling_avg = s->alpha * adc + (1.0 - s->alpha) * s->rolling_avg;
		s->rolling_avg4 = s->alpha5 * adc + (1.0 - s->alpha5) * s->rolling_avg4;
	}
	if (s->prev_range < 0) {
		s->prev_range = range;
	}
	if (s->prev_range != range || s->after_spike > 0) {
		if (s->prev_range != range) {
			s->consecutive = 0;
			s->after_spike = s->samples;
		} else {
			s->consecutive += 1;
		}
		if (range == ER_TOP_RANGE) {
			if (s->consecutive < 2) {
				s->rolling_avg = prev_avg;
				s->rolling_avg4 = prev_avg4;
			}
			adc = s->rolling_avg4;
		} else {
			adc = s->rolling_avg;
		}
		s->after_spike -= 1;
	}
	s->prev_range = range;
	return adc;
}

/*
 * The neighbour checks of sample `mid` between `before` and `after` (see the top of the
 * file): 1 if it is a one-sample excursion of the logic byte or of the range code (outside
 * its neighbours' span), or a one-sample jump.
 */
static inline uint8_t er_odd_one_out(const er_limit_s *lim, er_sample_s before, er_sample_s mid,
				     er_sample_s after)
{
	const int lb = before.key >> 8, lm = mid.key >> 8, la = after.key >> 8;
	const int rb = before.key & 7, rm = mid.key & 7, ra = after.key & 7;
	const er_limit_s *l = &lim[rm];

	if (((lm != lb) & (lb == la)) | ((rm > rb) & (rm > ra)) | ((rm < rb) & (rm < ra))) {
		return 1;
	}
	return (uint8_t)((lim[rb].range == l->range) & (lim[ra].range == l->range) &
			 (fabs(mid.amps - before.amps) > l->jump) & (fabs(mid.amps - after.amps) > l->jump) &
			 (fabs(after.amps - before.amps) < l->settle));
}

/*
 * Whether `mid` may fail a neighbour check at all: neither check can mark a sample equal to
 * the one before it in logic and range and within its jump limit of it. Nearly every sample
 * of a healthy stream is, so the full check is rarely reached.
 */
static inline int er_may_be_odd(er_sample_s before, er_sample_s mid)
{
	return (mid.key != before.key) | (fabs(mid.amps - before.amps) > mid.jump);
}

/*
 * On x86-64 Linux the fast run is built twice, for AVX2 (four doubles a vector) and for the
 * baseline (two), and the loader picks the one the CPU runs. AVX2 brings no fused
 * multiply-add (and -ffp-contract=off forbids it), so both round alike, bit for bit.
 */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && \
	(defined(__clang__) ? __clang_major__ >= 14 : __GNUC__ >= 6)
#define ER_VECTOR_CLONES __attribute__((target_clones("avx2", "default"), noinline))
#else
#define ER_VECTOR_CLONES
#endif

/** Words a fast run decodes at most before it looks for the first event among them. */
#define ER_RUN 64
/** Samples the exact path decodes after an event before a fast run is tried again. */
#define ER_AFTER_EVENT 4
/** The bits of a word that must not change along a fast run: logic, range code, bit 17. */
#define ER_KEY_BITS (0xff000000u | (7u << 14) | ER_UNUSED_BIT)

static inline int er_counter_of(uint32_t w)
{
	return (int)((w >> 18) & ER_COUNTER_MASK);
}

/*
 * The fast path of a healthy stream. Decodes up to m words of `src` whose logic byte and
 * range code equal `key` (bit 17 clear), and returns how many of them, from the first on,
 * are uneventful: the same logic and range as the sample before, bit 17 clear, the counter
 * one more than the word before (than `prev`, the counter's last value, before the
 * first), and the current within the
 * range's jump limit of the sample before (`prev_amps`, A). Along such words the exact path
 * below flags nothing, records no gap and marks no neighbour: a sample can fail a
 * neighbour check only when it differs from the sample before (er_may_be_odd). The outputs
 * of all m words are written; those past the returned count are rewritten by the exact
 * path. One range along the run, so no table look-up: the loops vectorise.
 */
ER_VECTOR_CLONES static Py_ssize_t er_fast_run(const er_range_s *t, double jump, uint32_t key,
					       const uint8_t *restrict src, Py_ssize_t m, int prev,
					       double prev_amps, double *restrict current,
					       uint8_t *restrict logic, uint8_t *restrict saturated,
					       uint8_t *restrict range, uint8_t *restrict floor,
					       uint8_t *restrict corrupt)
{
	uint8_t event[ER_RUN];
	const double o = t->o, k = t->k, gs = t->gs, gi = t->gi, ug = t->ug, c = t->c;
	const uint32_t code = (key >> 14) & 7u;
	const uint8_t top = code >= ER_TOP_RANGE, bottom = code == 0;
	Py_ssize_t j;

	for (j = 0; j < m; j++) {
		const uint32_t w = er_load_le32(src + 4 * j);
		const uint32_t adc = w & ER_ADC_MASK;
		/* adc * 4 < 2^16: as a signed int the conversion vectorises, same value. */
		const double x = ((double)(int32_t)(adc * 4u) - o) * k;

		current[j] = ug * (x * (gs * x + gi) + c);
		logic[j] = (uint8_t)(key >> 24);
		range[j] = (uint8_t)code;
		saturated[j] = (uint8_t)(top & (adc == ER_ADC_FULL_SCALE));
		floor[j] = (uint8_t)(bottom & (adc == 0));
		corrupt[j] = 0;
		event[j] = (uint8_t)((w & ER_KEY_BITS) != key);
	}
	event[0] |= (uint8_t)(((er_counter_of(er_load_le32(src)) - prev) & ER_COUNTER_MASK) != 1) |
		    (uint8_t)(fabs(current[0] - prev_amps) > jump);
	for (j = 1; j < m; j++) {
		const uint32_t step = (er_load_le32(src + 4 * j) >> 18) - (er_load_le32(src + 4 * (j - 1)) >> 18);

		event[j] |= (uint8_t)((step & ER_COUNTER_MASK) != 1) |
			    (uint8_t)(fabs(current[j] - current[j - 1]) > jump);
	}
	for (j = 0; j + 8 <= m; j += 8) {
		uint64_t any;

		memcpy(&any, event + j, 8);
		if (any) {
			break;
		}
	}
	while (j < m && !event[j]) {
		j++;
	}
	return j;
}

/*
 * Decode n words into the chunk's outputs from index out->at; stop early only when the gap
 * buffer is full. The last sample decoded before (the kernel's state: in this chunk's
 * outputs before out->at, or the chunk before's last when out->at is 0) is checked against
 * its neighbours here. `filter` is a constant at each call site so the compiler emits a
 * lean loop for the unfiltered case.
 *
 * Without the filter, stretches without events go through er_fast_run; every event (a
 * change of logic or range, a bad word, a counter skip, a step beyond the jump limit) and
 * the few samples after it go through the exact per-sample path, which alone flags.
 */
static inline Py_ssize_t er_decode_block(er_kernel_s *s, const uint8_t *restrict src, Py_ssize_t n,
					 const er_out_s *out, Py_ssize_t *n_gaps, const int filter)
{
	/* Locals, so that stores to the outputs (uint8_t aliases anything) force no reloads. */
	er_range_s tab[ER_N_RANGE_CODES];
	er_limit_s lim[ER_N_RANGE_CODES];
	er_spike_s spike = s->spike;
	const Py_ssize_t at = out->at;
	double *restrict current = out->current + at;
	uint8_t *restrict logic = out->logic + at;
	uint8_t *restrict saturated = out->saturated + at;
	uint8_t *restrict range = out->range + at;
	uint8_t *restrict floor = out->floor + at;
	uint8_t *restrict corrupt = out->corrupt + at;
	int64_t *restrict gaps = out->gaps;
	const Py_ssize_t gap_cap = out->gap_cap;
	int prev = s->prev_counter;
	Py_ssize_t ng = 0;
	Py_ssize_t i = 0;
	Py_ssize_t fast = 0;
	/* The two samples before the one being decoded, `known` of them (the state's). */
	er_sample_s before = s->before, mid = s->mid;
	int known = s->known;
	uint8_t marked_before = 0;

	memcpy(lim, s->lim, sizeof(lim));
	memcpy(tab, s->tab, sizeof(tab));
	while (i < n) {
		Py_ssize_t stop = n;

		if (!filter) {
			const int code = mid.key & 7;

			/* A run needs the counter's last value and the two samples before it. */
			if (known == 2 && prev >= 0 && code <= ER_TOP_RANGE && !er_may_be_odd(before, mid)) {
				const Py_ssize_t m = n - i < ER_RUN ? n - i : ER_RUN;
				const uint32_t key = (uint32_t)(mid.key >> 8) << 24 | (uint32_t)code << 14;
				const Py_ssize_t e = er_fast_run(&tab[code], mid.jump, key, src + 4 * i, m,
								 prev, mid.amps, current + i, logic + i,
								 saturated + i, range + i, floor + i, corrupt + i);

				if (e > 0) {
					before = e >= 2 ? (er_sample_s){current[i + e - 2], mid.jump, mid.key} : mid;
					mid = (er_sample_s){current[i + e - 1], mid.jump, mid.key};
					prev = er_counter_of(er_load_le32(src + 4 * (i + e - 1)));
					i += e;
					fast += e;
					if (e == m) {
						continue;
					}
				}
			}
			stop = n - i < ER_AFTER_EVENT ? n : i + ER_AFTER_EVENT;
		}
		for (; i < stop; i++) {
			const uint32_t w = er_load_le32(src + 4 * i);
			const int counter = er_counter_of(w);
			const uint32_t adc = w & ER_ADC_MASK;
			const uint32_t code = (w >> 14) & 7u;
			uint8_t bad = (uint8_t)(((w & ER_UNUSED_BIT) != 0) | (code > ER_TOP_RANGE));

			if (prev >= 0 && counter != ((prev + 1) & ER_COUNTER_MASK)) {
				const int next = i + 1 < n ? er_counter_of(er_load_le32(src + 4 * (i + 1))) : -1;

				if (next == ((prev + 2) & ER_COUNTER_MASK)) {
					/* The next word continues the count: this word's counter is corrupt. */
					bad = 1;
					prev = (prev + 1) & ER_COUNTER_MASK;
				} else {
					if (ng == gap_cap) {
						goto done;
					}
					gaps[2 * ng] = at + i;
					gaps[2 * ng + 1] = (counter - prev - 1) & ER_COUNTER_MASK;
					ng++;
					prev = counter;
					/* Samples were lost between the last one and this: no neighbours. */
					known = 0;
				}
			} else {
				prev = counter;
			}

			const er_range_s *t = &tab[code];
			const double x = ((double)(adc * 4u) - t->o) * t->k;
			double amps = t->ug * (x * (t->gs * x + t->gi) + t->c);

			if (filter) {
				amps = er_spike_filter(&spike, code > ER_TOP_RANGE ? ER_TOP_RANGE : (int)code, amps);
			}
			const er_sample_s here = {amps, lim[code].jump, (int)(w >> 24 << 8 | code)};

			current[i] = amps;
			logic[i] = (uint8_t)(w >> 24);
			saturated[i] = (uint8_t)((code >= ER_TOP_RANGE) & (adc == ER_ADC_FULL_SCALE));
			range[i] = (uint8_t)code;
			floor[i] = (uint8_t)((code == 0) & (adc == 0));
			corrupt[i] = bad;
			if (known == 2) {
				if (er_may_be_odd(before, mid)) {
					const uint8_t odd = er_odd_one_out(lim, before, mid, here);

					if (at + i > 0) {
						corrupt[i - 1] |= odd;
					} else {
						marked_before |= odd; /* the last sample of the chunk before */
					}
				}
			} else {
				known++;
			}
			before = mid;
			mid = here;
		}
	}
done:
	s->spike = spike;
	s->prev_counter = prev;
	s->before = before;
	s->mid = mid;
	s->known = known;
	s->marked_before = marked_before;
	s->fast_samples += fast;
	*n_gaps = ng;
	return i;
}

static int er_get_out(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *name)
{
	if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
		return -1;
	}
	if (view->itemsize != itemsize) {
		PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes, got %zd", name,
			     itemsize, view->itemsize);
		PyBuffer_Release(view);
		return -1;
	}
	return 0;
}

static PyObject *er_kernel_decode(er_kernel_s *self, PyObject *args)
{
	PyObject *src_obj, *cur_obj, *logic_obj, *sat_obj, *range_obj, *floor_obj, *corrupt_obj,
		*gaps_obj;
	Py_buffer src, cur, logic, sat, rng, flr, bad, gaps;
	Py_ssize_t n, at, n_done, n_gaps = 0;
	PyObject *result = NULL;

	if (!PyArg_ParseTuple(args, "OOOOOOOnO:decode", &src_obj, &cur_obj, &logic_obj, &sat_obj,
			      &range_obj, &floor_obj, &corrupt_obj, &at, &gaps_obj)) {
		return NULL;
	}
	if (at < 0) {
		PyErr_Format(PyExc_ValueError, "at: expected an index >= 0, got %zd", at);
		return NULL;
	}
	if (PyObject_GetBuffer(src_obj, &src, PyBUF_C_CONTIGUOUS) < 0) {
		return NULL;
	}
	if (er_get_out(cur_obj, &cur, 8, "current") < 0) {
		goto release_src;
	}
	if (er_get_out(logic_obj, &logic, 1, "logic") < 0) {
		goto release_cur;
	}
	if (er_get_out(sat_obj, &sat, 1, "saturated") < 0) {
		goto release_logic;
	}
	if (er_get_out(range_obj, &rng, 1, "range") < 0) {
		goto release_sat;
	}
	if (er_get_out(floor_obj, &flr, 1, "floor") < 0) {
		goto release_rng;
	}
	if (er_get_out(corrupt_obj, &bad, 1, "corrupt") < 0) {
		goto release_flr;
	}
	if (er_get_out(gaps_obj, &gaps, 8, "gaps") < 0) {
		goto release_bad;
	}
	n = src.len / 4;
	if (cur.len / 8 - at < n || logic.len - at < n || sat.len - at < n || rng.len - at < n ||
	    flr.len - at < n || bad.len - at < n) {
		PyErr_Format(PyExc_ValueError,
			     "output arrays hold fewer than the %zd samples of the block from index %zd", n, at);
		goto release_gaps;
	}
	{
		const er_out_s out = {at, cur.buf, logic.buf, sat.buf, rng.buf, flr.buf, bad.buf,
				      gaps.buf, gaps.len / 16};

		Py_BEGIN_ALLOW_THREADS
		if (self->spike_filter) {
			n_done = er_decode_block(self, src.buf, n, &out, &n_gaps, 1);
		} else {
			n_done = er_decode_block(self, src.buf, n, &out, &n_gaps, 0);
		}
		Py_END_ALLOW_THREADS
	}
	result = Py_BuildValue("nn", n_done, n_gaps);
release_gaps:
	PyBuffer_Release(&gaps);
release_bad:
	PyBuffer_Release(&bad);
release_flr:
	PyBuffer_Release(&flr);
release_rng:
	PyBuffer_Release(&rng);
release_sat:
	PyBuffer_Release(&sat);
release_logic:
	PyBuffer_Release(&logic);
release_cur:
	PyBuffer_Release(&cur);
release_src:
	PyBuffer_Release(&src);
	return result;
}

static int er_kernel_init(er_kernel_s *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"table", "jump", "spike_filter", "alpha", "alpha5", "spike_samples",
				 NULL};
	PyObject *table_obj, *jump_obj;
	Py_buffer table, jump;
	int spike_filter = 0;
	double alpha = 0.18, alpha5 = 0.06;
	int spike_samples = 3;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|pddi:Kernel", kwlist, &table_obj, &jump_obj,
					 &spike_filter, &alpha, &alpha5, &spike_samples)) {
		return -1;
	}
	if (PyObject_GetBuffer(jump_obj, &jump, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
		return -1;
	}
	if (jump.itemsize != 8 || jump.format == NULL || jump.format[0] != 'd' ||
	    jump.len != (Py_ssize_t)(sizeof(double) * ER_N_RANGES)) {
		PyErr_SetString(PyExc_ValueError, "jump: expected 5 float64 values (the jump limit per range, A)");
		PyBuffer_Release(&jump);
		return -1;
	}
	for (int code = 0; code < ER_N_RANGE_CODES; code++) {
		const int r = code > ER_TOP_RANGE ? ER_TOP_RANGE : code;
		const double limit = ((const double *)jump.buf)[r];

		self->lim[code] = (er_limit_s){limit, limit / 10.0, r};
	}
	PyBuffer_Release(&jump);
	if (PyObject_GetBuffer(table_obj, &table, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
		return -1;
	}
	if (table.itemsize != 8 || table.format == NULL || table.format[0] != 'd' ||
	    table.len != (Py_ssize_t)(sizeof(double) * ER_N_RANGES * ER_N_PARAMS)) {
		PyErr_SetString(PyExc_ValueError,
				"table: expected 5x6 float64 values (O, adc_mult/R, GS, GI, UG, S*V+I per range)");
		PyBuffer_Release(&table);
		return -1;
	}
	const double *t = table.buf;
	for (int code = 0; code < ER_N_RANGE_CODES; code++) {
		const double *row = t + ER_N_PARAMS * (code > ER_TOP_RANGE ? ER_TOP_RANGE : code);
		self->tab[code] = (er_range_s){row[0], row[1], row[2], row[3], row[4], row[5]};
	}
	PyBuffer_Release(&table);
	self->spike_filter = spike_filter;
	self->spike = (er_spike_s){
		.alpha = alpha, .alpha5 = alpha5, .samples = spike_samples, .prev_range = -1,
	};
	self->prev_counter = -1;
	self->known = 0;
	self->marked_before = 0;
	self->fast_samples = 0;
	return 0;
}

static PyObject *er_kernel_lost(er_kernel_s *self, PyObject *Py_UNUSED(ignored))
{
	self->known = 0;
	Py_RETURN_NONE;
}

static PyMethodDef er_kernel_methods[] = {
	{"decode", (PyCFunction)er_kernel_decode, METH_VARARGS,
	 "decode(src, current, logic, saturated, range, floor, corrupt, at, gaps) -> (n_done, n_gaps)\n\n"
	 "Decode the len(src) // 4 whole words of src into the preallocated outputs of one chunk "
	 "(float64 A, uint8, bool, uint8, bool, bool) from index at, and check each sample against "
	 "its neighbours, the last two decoded before (by this kernel, in any call) included. Stops "
	 "early only when the gap buffer (int64 (cap, 2)) is full; gap positions are indices in the "
	 "chunk."},
	{"lost", (PyCFunction)er_kernel_lost, METH_NOARGS,
	 "lost()\n\nSamples were lost before the next word (found outside the counter): no check "
	 "compares samples across the loss."},
	{NULL, NULL, 0, NULL},
};

static PyMemberDef er_kernel_members[] = {
	{"prev_counter", T_INT, offsetof(er_kernel_s, prev_counter), READONLY,
	 "Sample counter of the last decoded word, -1 before the first."},
	{"marked_before", T_INT, offsetof(er_kernel_s, marked_before), READONLY,
	 "1 when the last decode call, from index 0, found the sample decoded before it (the last "
	 "of the chunk before) corrupt."},
	{"fast_samples", T_LONGLONG, offsetof(er_kernel_s, fast_samples), READONLY,
	 "Samples decoded so far along runs without an event (logic, range, counter, bad word or "
	 "jump), where no check can flag; the rest went through the per-sample checks."},
	{NULL, 0, 0, 0, NULL},
};

static PyTypeObject er_kernel_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "energyrig.instruments.ppk2._decode.Kernel",
	.tp_basicsize = sizeof(er_kernel_s),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Kernel(table, jump, spike_filter=False, alpha=0.18, alpha5=0.06, spike_samples=3)\n\n"
		  "PPK2 word decoder with its conversion table (5x6 float64), the jump limit of each "
		  "range (5 float64, A) and its stream state.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)er_kernel_init,
	.tp_methods = er_kernel_methods,
	.tp_members = er_kernel_members,
};

static struct PyModuleDef er_module = {
	PyModuleDef_HEAD_INIT, "_decode", "Compiled PPK2 word decoder (see decode.py).", -1, NULL,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__decode(void)
{
	PyObject *m;

	if (PyType_Ready(&er_kernel_type) < 0) {
		return NULL;
	}
	m = PyModule_Create(&er_module);
	if (m == NULL) {
		return NULL;
	}
	Py_INCREF(&er_kernel_type);
	if (PyModule_AddObject(m, "Kernel", (PyObject *)&er_kernel_type) < 0) {
		Py_DECREF(&er_kernel_type);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
