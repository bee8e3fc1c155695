/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Trigger windows and v*i integration over contiguous segments of samples.
 *
 * The Python side (energyrig.energy.windows.WindowFinder) splits every chunk at its gaps (lost
 * samples) and feeds each contiguous segment with the absolute index of its first sample.
 * This kernel carries the state machine across segments, so windows, debounce spans and
 * baseline spans may cross any number of chunk boundaries. Memory is fixed at construction
 * (a ring of the last guard + baseline + min-pulse low samples, and an event buffer); the
 * hot loop allocates nothing and runs without the GIL. Current and voltage may come as float64
 * or as float32 (as a file holds them, not converted first); every product and sum is
 * computed in double, so a float32 sample gives the bits its float64 conversion would.
 *
 * Conventions (documented in full in energy.py):
 *  - sample k (absolute index) is at t_k = k * T;
 *  - a window is the run of high samples a..b; its edges are estimated half a sample outside
 *    (t_a - T/2, t_b + T/2), so duration = (b - a + 1) T;
 *  - energy = trapezoidal integral over t_a..t_b (gaps bridged linearly) + p_a T/2 + p_b T/2,
 *    which is T * (sum of p) + (lost L between samples p1, p2) * T (p1 + p2) / 2;
 *  - edge error bound = T * (A - prev) * max(|p_prev|, |p_A|) at the rise plus the same at
 *    the fall, where prev is the last received sample before the edge.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

enum er_state {
    ER_ST_START = 0,      /* no sample seen yet */
    ER_ST_UNPAIRED,       /* capture began with the trigger high: wait for the first fall */
    ER_ST_LOW,            /* trigger low */
    ER_ST_HIGH,           /* inside a (tentative) window */
    ER_ST_PEND,           /* low after a window, shorter than the minimum pulse so far */
};

enum er_event {
    ER_EV_WINDOW = 0,
    ER_EV_GLITCH = 1,
    ER_EV_UNPAIRED_FALL = 2,
    ER_EV_UNPAIRED_RISE = 3,
};

enum er_base {
    ER_BASE_BEFORE = 0,
    ER_BASE_AFTER = 1,
    ER_BASE_NONE = 2,
};

#define ER_EVENTS_MAX 256
#define ER_EVENTS_PER_RUN 4

typedef struct {
    int kind;
    int64_t a, b, n, lost, sat;
    double energy_j, baseline_w, edge_error_j;
    int base_src, glitch;
} er_event_s;

/* A window under construction (or held while its after-edge baseline is collected). */
typedef struct {
    int64_t a, b, n, lost, sat;
    double psum;          /* sum of p + gap corrections, times T gives joules */
    double err_rise;      /* edge error at the rise, in sample-periods * W */
    double base_w;
    int base_src;
    int glitch;
} er_window_s;

typedef struct {
    PyObject_HEAD
    /* settings */
    uint8_t mask;
    uint8_t invert;
    int64_t pulse;        /* minimum pulse in samples (>= 1) */
    int64_t guard;        /* guard gap in samples */
    int64_t base;         /* baseline span in samples (>= 1) */
    double period;
    /* previous received sample */
    int64_t prev_abs;
    double prev_p;
    int prev_level;
    int state;
    int64_t low_start;    /* absolute index where the current low run began */
    int glitch_since;     /* a glitch happened since the last window rose */
    er_window_s win;
    /* pending low span after a fall (debounce) */
    int64_t fall_abs, pend_n, pend_lost, pend_sat;
    double p_b, p_f, pend_psum;
    /* held window awaiting its after-edge baseline span [after_lo, after_hi) */
    int held;
    er_window_s hw;
    double hw_err_fall;
    int64_t after_lo, after_hi, after_next, after_cnt;
    double after_sum;
    /* ring of the current low run's last received samples (previous segments only) */
    double *ring_p;
    int64_t *ring_abs;
    int64_t ring_cap, ring_len, ring_head;
    /* events produced while the GIL is released */
    er_event_s events[ER_EVENTS_MAX];
    int n_events;
} er_energy_s;

/* One contiguous segment of samples. */
typedef struct {
    const double *cur;    /* float64 samples, or NULL: float32 ones in cur32 */
    const float *cur32;
    const double *volt;   /* NULL and volt32 NULL: constant voltage vconst */
    const float *volt32;  /* float32 samples (read as double: the sums are in double) */
    double vconst;
    const uint8_t *logic;
    const uint8_t *sat;   /* NULL: unknown */
    int64_t n;
    int64_t abs0;
} er_segment_s;

static inline double er_p(const er_segment_s *sg, int64_t j)
{
    double c = sg->cur ? sg->cur[j] : (double)sg->cur32[j];
    return c * (sg->volt ? sg->volt[j] : sg->volt32 ? (double)sg->volt32[j] : sg->vconst);
}

static inline int er_level(const er_energy_s *st, uint8_t x)
{
    return ((x & st->mask) != 0) ^ st->invert;
}

/* Sum of c*v (ER_SUM_CV) or of c (ER_SUM_C) over [j, e) in double, whatever the samples'
 * type (a float32 sample is widened exactly): four independent accumulators so the
 * compiler can pipeline. One function per combination of types. */
#define ER_SUM_CV(name, CT, VT)                                                       \
    static double name(const CT *c, const VT *v, int64_t j, int64_t e)                  \
    {                                                                                   \
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;                                  \
        for (; j + 4 <= e; j += 4) {                                                    \
            a0 += (double)c[j] * (double)v[j];                                          \
            a1 += (double)c[j + 1] * (double)v[j + 1];                                  \
            a2 += (double)c[j + 2] * (double)v[j + 2];                                  \
            a3 += (double)c[j + 3] * (double)v[j + 3];                                  \
        }                                                                               \
        for (; j < e; j++)                                                              \
            a0 += (double)c[j] * (double)v[j];                                          \
        return (a0 + a1) + (a2 + a3);                                                   \
    }
#define ER_SUM_C(name, CT)                                                              \
    static double name(const CT *c, int64_t j, int64_t e)                               \
    {                                                                                   \
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;                                  \
        for (; j + 4 <= e; j += 4) {                                                    \
            a0 += (double)c[j];                                                         \
            a1 += (double)c[j + 1];                                                     \
            a2 += (double)c[j + 2];                                                     \
            a3 += (double)c[j + 3];                                                     \
        }                                                                               \
        for (; j < e; j++)                                                              \
            a0 += (double)c[j];                                                         \
        return (a0 + a1) + (a2 + a3);                                                   \
    }
ER_SUM_CV(er_sum_dd, double, double)
ER_SUM_CV(er_sum_df, double, float)
ER_SUM_CV(er_sum_fd, float, double)
ER_SUM_CV(er_sum_ff, float, float)
ER_SUM_C(er_sum_d, double)
ER_SUM_C(er_sum_f, float)

/* Sum of p over [s, e). */
static double er_sum_p(const er_segment_s *sg, int64_t s, int64_t e)
{
    if (sg->volt)
        return sg->cur ? er_sum_dd(sg->cur, sg->volt, s, e) : er_sum_fd(sg->cur32, sg->volt, s, e);
    if (sg->volt32)
        return sg->cur ? er_sum_df(sg->cur, sg->volt32, s, e)
                       : er_sum_ff(sg->cur32, sg->volt32, s, e);
    return (sg->cur ? er_sum_d(sg->cur, s, e) : er_sum_f(sg->cur32, s, e)) * sg->vconst;
}

static int64_t er_count_sat(const er_segment_s *sg, int64_t s, int64_t e)
{
    int64_t count = 0;
    if (!sg->sat)
        return 0;
    for (int64_t j = s; j < e; j++)
        count += sg->sat[j] != 0;
    return count;
}

/* First index in [s, n) whose level differs from lv, or n; eight bytes at a time. */
static int64_t er_run_end(const er_energy_s *st, const er_segment_s *sg, int64_t s, int lv)
{
    const uint8_t *x = sg->logic;
    const uint64_t lanes = (uint64_t)st->mask * 0x0101010101010101ULL;
    /* looking for a byte whose trigger bit is set (want_set) or clear */
    const int want_set = (lv ^ st->invert) == 0;
    int64_t j = s;
    for (; j + 8 <= sg->n; j += 8) {
        uint64_t w;
        memcpy(&w, x + j, 8);
        uint64_t hit = (want_set ? w : ~w) & lanes;
        if (hit)
            return j + (__builtin_ctzll(hit) >> 3);
    }
    for (; j < sg->n; j++)
        if (er_level(st, x[j]) != lv)
            return j;
    return sg->n;
}

static void er_ring_clear(er_energy_s *st)
{
    st->ring_len = 0;
    st->ring_head = 0;
}

static void er_ring_push(er_energy_s *st, int64_t abs_index, double p)
{
    st->ring_p[st->ring_head] = p;
    st->ring_abs[st->ring_head] = abs_index;
    st->ring_head = (st->ring_head + 1) % st->ring_cap;
    if (st->ring_len < st->ring_cap)
        st->ring_len++;
}

/* Sum and count of p over absolute [lo, hi): ring (earlier segments) plus local [0, upto). */
static void er_span_sum(const er_energy_s *st, const er_segment_s *sg, int64_t lo, int64_t hi,
                        int64_t upto, double *sum, int64_t *cnt)
{
    double s = 0.0;
    int64_t c = 0;
    for (int64_t k = 0; k < st->ring_len; k++) {
        int64_t i = (st->ring_head - 1 - k + st->ring_cap) % st->ring_cap;
        int64_t ab = st->ring_abs[i];
        if (ab < lo)
            break;
        if (ab < hi) {
            s += st->ring_p[i];
            c++;
        }
    }
    int64_t j0 = lo - sg->abs0, j1 = hi - sg->abs0;
    if (j0 < 0)
        j0 = 0;
    if (j1 > upto)
        j1 = upto;
    if (j1 > j0) {
        s += er_sum_p(sg, j0, j1);
        c += j1 - j0;
    }
    *sum = s;
    *cnt = c;
}

static er_event_s *er_event_new(er_energy_s *st, int kind)
{
    er_event_s *ev = &st->events[st->n_events++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = kind;
    return ev;
}

static void er_emit_window(er_energy_s *st, const er_window_s *w, double err_fall)
{
    er_event_s *ev = er_event_new(st, ER_EV_WINDOW);
    ev->a = w->a;
    ev->b = w->b;
    ev->n = w->n;
    ev->lost = w->lost;
    ev->sat = w->sat;
    ev->energy_j = w->psum * st->period;
    ev->baseline_w = w->base_src == ER_BASE_NONE ? NAN : w->base_w;
    ev->edge_error_j = (w->err_rise + err_fall) * st->period;
    ev->base_src = w->base_src;
    ev->glitch = w->glitch;
}

/* Close the held window's after-edge baseline: complete (enough coverage) or not. */
static void er_resolve_held(er_energy_s *st, int complete)
{
    if (!st->held)
        return;
    if (complete && st->after_cnt > 0) {
        st->hw.base_w = st->after_sum / (double)st->after_cnt;
        st->hw.base_src = ER_BASE_AFTER;
    } else {
        st->hw.base_src = ER_BASE_NONE;
    }
    er_emit_window(st, &st->hw, st->hw_err_fall);
    st->held = 0;
}

/* The pending low span has lasted the minimum pulse: the window (or glitch) is over.
 * upto: local samples [0, upto) of the segment have been seen. */
static void er_confirm_fall(er_energy_s *st, const er_segment_s *sg, int64_t upto)
{
    er_window_s *w = &st->win;
    int64_t f = st->fall_abs;
    st->state = ER_ST_LOW;
    if (w->b - w->a + 1 < st->pulse) {
        er_event_s *ev = er_event_new(st, ER_EV_GLITCH);
        ev->a = w->a;
        ev->b = w->b;
        st->glitch_since = 1;
        return;
    }
    w->lost += f - w->b - 1;
    double err_fall = (double)(f - w->b) * fmax(fabs(st->p_b), fabs(st->p_f));
    if (w->base_src == ER_BASE_BEFORE) {
        er_emit_window(st, w, err_fall);
        return;
    }
    st->held = 1;
    st->hw = *w;
    st->hw_err_fall = err_fall;
    st->after_lo = f + st->guard;
    st->after_hi = st->after_lo + st->base;
    er_span_sum(st, sg, st->after_lo, st->after_hi, upto, &st->after_sum, &st->after_cnt);
    st->after_next = sg->abs0 + upto;
    if (st->after_next >= st->after_hi)
        er_resolve_held(st, 1);
}

/* Rising edge at local j (absolute A) from the low state. */
static void er_rise(er_energy_s *st, const er_segment_s *sg, int64_t j, int64_t before_abs,
                    double p_before)
{
    int64_t A = sg->abs0 + j;
    double pA = er_p(sg, j);
    er_window_s *w = &st->win;
    if (st->held)
        er_resolve_held(st, A >= st->after_hi);
    memset(w, 0, sizeof(*w));
    w->a = A;
    w->lost = A - before_abs - 1;
    w->err_rise = (double)(A - before_abs) * fmax(fabs(p_before), fabs(pA));
    w->glitch = st->glitch_since;
    st->glitch_since = 0;
    w->base_src = ER_BASE_NONE;
    int64_t lo = A - st->guard - st->base, hi = A - st->guard;
    if (st->low_start <= lo) {
        double sum;
        int64_t cnt;
        er_span_sum(st, sg, lo, hi, j, &sum, &cnt);
        if (cnt > 0) {
            w->base_w = sum / (double)cnt;
            w->base_src = ER_BASE_BEFORE;
        }
    }
    st->state = ER_ST_HIGH;
}

/* Falling edge at local j (absolute F) from the high state. */
static void er_fall(er_energy_s *st, const er_segment_s *sg, int64_t j, int64_t before_abs,
                    double p_before)
{
    st->fall_abs = sg->abs0 + j;
    st->win.b = before_abs;
    st->p_b = p_before;
    st->p_f = er_p(sg, j);
    st->pend_n = st->pend_lost = st->pend_sat = 0;
    st->pend_psum = 0.0;
    st->low_start = st->fall_abs;
    er_ring_clear(st);
    st->state = ER_ST_PEND;
}

/* The trigger came back high within the minimum pulse: the low span was a bounce. */
static void er_merge_bounce(er_energy_s *st, const er_segment_s *sg, int64_t j, int64_t before_abs,
                            double p_before)
{
    er_window_s *w = &st->win;
    int64_t A = sg->abs0 + j;
    double pA = er_p(sg, j);
    int64_t gap_fall = st->fall_abs - w->b - 1, gap_rise = A - before_abs - 1;
    w->psum += st->pend_psum + (double)gap_fall * 0.5 * (st->p_b + st->p_f)
               + (double)gap_rise * 0.5 * (p_before + pA);
    w->n += st->pend_n;
    w->lost += st->pend_lost + gap_fall + gap_rise;
    w->sat += st->pend_sat;
    w->glitch = 1;
    st->state = ER_ST_HIGH;
}

/* Consume the samples [s, e) of one run of constant level according to the state. */
static void er_consume(er_energy_s *st, const er_segment_s *sg, int64_t s, int64_t e)
{
    if (st->state == ER_ST_PEND) {
        int64_t c = st->fall_abs + st->pulse - 1 - sg->abs0;  /* local index that confirms */
        if (c < s)
            c = s;
        if (c >= e) {
            st->pend_psum += er_sum_p(sg, s, e);
            st->pend_n += e - s;
            st->pend_sat += er_count_sat(sg, s, e);
            return;
        }
        er_confirm_fall(st, sg, c + 1);
        s = c + 1;
    }
    switch (st->state) {
    case ER_ST_HIGH:
        st->win.psum += er_sum_p(sg, s, e);
        st->win.n += e - s;
        st->win.sat += er_count_sat(sg, s, e);
        break;
    case ER_ST_LOW:
        if (st->held && e > s) {
            int64_t lo = st->after_next > st->after_lo ? st->after_next : st->after_lo;
            int64_t j0 = lo - sg->abs0, j1 = st->after_hi - sg->abs0;
            if (j0 < s)
                j0 = s;
            if (j1 > e)
                j1 = e;
            if (j1 > j0) {
                st->after_sum += er_sum_p(sg, j0, j1);
                st->after_cnt += j1 - j0;
            }
            st->after_next = sg->abs0 + e;
            if (st->after_next >= st->after_hi)
                er_resolve_held(st, 1);
        }
        break;
    default:
        break;
    }
}

/* A gap of lost samples between the previous segment and this one, same level on both sides. */
static void er_bridge(er_energy_s *st, int64_t lost, double p_first)
{
    double corr = (double)lost * 0.5 * (st->prev_p + p_first);
    if (st->state == ER_ST_HIGH) {
        st->win.psum += corr;
        st->win.lost += lost;
    } else if (st->state == ER_ST_PEND) {
        st->pend_psum += corr;
        st->pend_lost += lost;
    }
}

/* Process runs of the segment from local index s; returns where it stopped (n when done,
 * earlier when the event buffer needs flushing). */
static int64_t er_process(er_energy_s *st, const er_segment_s *sg, int64_t s)
{
    while (s < sg->n) {
        if (st->n_events > ER_EVENTS_MAX - ER_EVENTS_PER_RUN)
            return s;
        int lv = er_level(st, sg->logic[s]);
        int64_t e = er_run_end(st, sg, s, lv);
        if (st->state == ER_ST_START) {
            st->state = lv ? ER_ST_UNPAIRED : ER_ST_LOW;
            st->low_start = sg->abs0;
        } else {
            int64_t before_abs = s ? sg->abs0 + s - 1 : st->prev_abs;
            double p_before = s ? er_p(sg, s - 1) : st->prev_p;
            int before_lv = s ? !lv : st->prev_level;
            if (lv != before_lv) {
                if (lv) {
                    if (st->state == ER_ST_PEND)
                        er_merge_bounce(st, sg, s, before_abs, p_before);
                    else
                        er_rise(st, sg, s, before_abs, p_before);
                } else if (st->state == ER_ST_UNPAIRED) {
                    er_event_s *ev = er_event_new(st, ER_EV_UNPAIRED_FALL);
                    ev->a = sg->abs0 + s;
                    st->low_start = ev->a;
                    er_ring_clear(st);
                    st->state = ER_ST_LOW;
                } else {
                    er_fall(st, sg, s, before_abs, p_before);
                }
            } else if (sg->abs0 + s - before_abs > 1) {
                er_bridge(st, sg->abs0 + s - before_abs - 1, er_p(sg, s));
            }
        }
        er_consume(st, sg, s, e);
        s = e;
    }
    return s;
}

/* Remember the end of the segment: last sample, and the tail of the current low run. */
static void er_segment_done(er_energy_s *st, const er_segment_s *sg)
{
    int64_t n = sg->n;
    st->prev_abs = sg->abs0 + n - 1;
    st->prev_p = er_p(sg, n - 1);
    st->prev_level = er_level(st, sg->logic[n - 1]);
    if (st->state != ER_ST_LOW && st->state != ER_ST_PEND)
        return;
    int64_t j = st->low_start - sg->abs0;
    if (j < 0)
        j = 0;
    if (j < n - st->ring_cap)
        j = n - st->ring_cap;
    for (; j < n; j++)
        er_ring_push(st, sg->abs0 + j, er_p(sg, j));
}

static PyObject *er_events_to_list(er_energy_s *st, PyObject *list)
{
    for (int i = 0; i < st->n_events; i++) {
        const er_event_s *ev = &st->events[i];
        PyObject *item;
        if (ev->kind == ER_EV_WINDOW)
            item = Py_BuildValue("(iLLLdddiLLi)", ev->kind, (long long)ev->a, (long long)ev->b,
                                 (long long)ev->n, ev->energy_j, ev->baseline_w, ev->edge_error_j,
                                 ev->base_src, (long long)ev->lost, (long long)ev->sat, ev->glitch);
        else
            item = Py_BuildValue("(iLL)", ev->kind, (long long)ev->a, (long long)ev->b);
        if (!item || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            st->n_events = 0;
            return NULL;
        }
        Py_DECREF(item);
    }
    st->n_events = 0;
    return list;
}

/* ---- Python type ---------------------------------------------------------------------- */

static int er_energy_init(er_energy_s *st, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"period_s", "trigger_bit", "active_high", "pulse_samples",
                             "guard_samples", "baseline_samples", NULL};
    double period;
    int bit, active_high;
    long long pulse, guard, base;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "dipLLL", kwlist, &period, &bit, &active_high,
                                     &pulse, &guard, &base))
        return -1;
    if (!(period > 0.0) || bit < 0 || bit > 7 || pulse < 1 || guard < 0 || base < 1) {
        PyErr_SetString(PyExc_ValueError,
                        "need period_s > 0, 0 <= trigger_bit <= 7, pulse_samples >= 1, "
                        "guard_samples >= 0, baseline_samples >= 1");
        return -1;
    }
    PyMem_Free(st->ring_p);
    PyMem_Free(st->ring_abs);
    memset((char *)st + sizeof(PyObject), 0, sizeof(*st) - sizeof(PyObject));
    st->period = period;
    st->mask = (uint8_t)(1u << bit);
    st->invert = !active_high;
    st->pulse = pulse;
    st->guard = guard;
    st->base = base;
    st->state = ER_ST_START;
    st->ring_cap = guard + base + pulse;
    st->ring_p = PyMem_Malloc(sizeof(double) * (size_t)st->ring_cap);
    st->ring_abs = PyMem_Malloc(sizeof(int64_t) * (size_t)st->ring_cap);
    if (!st->ring_p || !st->ring_abs) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void er_energy_dealloc(er_energy_s *st)
{
    PyMem_Free(st->ring_p);
    PyMem_Free(st->ring_abs);
    Py_TYPE(st)->tp_free((PyObject *)st);
}

static int er_get_buffer(PyObject *obj, Py_buffer *view, const char *fmt, Py_ssize_t itemsize,
                         const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    if (view->itemsize != itemsize || strchr(fmt, *f) == NULL || f[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "%s must be a contiguous %s array, got format '%s'", what,
                     fmt, view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* A contiguous float64 or float32 array (the samples as a file holds them). */
static int er_get_float_buffer(PyObject *obj, Py_buffer *view, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    if (!((*f == 'd' && view->itemsize == 8) || (*f == 'f' && view->itemsize == 4))
        || f[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "%s must be a contiguous float64 or float32 array, got "
                     "format '%s'", what, view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *er_energy_feed(er_energy_s *st, PyObject *args)
{
    PyObject *cur_o, *volt_o, *logic_o, *sat_o;
    long long abs0;
    if (!st->ring_p) {
        PyErr_SetString(PyExc_RuntimeError, "Integrator not initialised");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOOL", &cur_o, &volt_o, &logic_o, &sat_o, &abs0))
        return NULL;
    Py_buffer cur = {0}, volt = {0}, logic = {0}, sat = {0};
    int have_volt = 0, have_sat = 0;
    PyObject *out = NULL;
    er_segment_s sg = {0};
    if (er_get_float_buffer(cur_o, &cur, "current") < 0)
        return NULL;
    if (er_get_buffer(logic_o, &logic, "Bb?c", 1, "logic") < 0)
        goto done;
    sg.n = cur.len / cur.itemsize;
    if (PyFloat_Check(volt_o) || PyLong_Check(volt_o)) {
        sg.vconst = PyFloat_AsDouble(volt_o);
        if (PyErr_Occurred())
            goto done;
    } else {
        if (er_get_float_buffer(volt_o, &volt, "voltage") < 0)
            goto done;
        have_volt = 1;
        if (volt.itemsize == 8)
            sg.volt = volt.buf;
        else
            sg.volt32 = volt.buf;
        if (volt.len / volt.itemsize != sg.n) {
            PyErr_SetString(PyExc_ValueError, "voltage and current differ in length");
            goto done;
        }
    }
    if (sat_o != Py_None) {
        if (er_get_buffer(sat_o, &sat, "Bb?c", 1, "saturated") < 0)
            goto done;
        have_sat = 1;
        sg.sat = sat.buf;
        if (sat.len != sg.n) {
            PyErr_SetString(PyExc_ValueError, "saturated and current differ in length");
            goto done;
        }
    }
    if (logic.len != sg.n) {
        PyErr_SetString(PyExc_ValueError, "logic and current differ in length");
        goto done;
    }
    if (st->state != ER_ST_START && abs0 <= st->prev_abs) {
        PyErr_Format(PyExc_ValueError, "segment starts at sample %lld, not after sample %lld",
                     abs0, (long long)st->prev_abs);
        goto done;
    }
    if (cur.itemsize == 8)
        sg.cur = cur.buf;
    else
        sg.cur32 = cur.buf;
    sg.logic = logic.buf;
    sg.abs0 = abs0;
    out = PyList_New(0);
    if (!out || sg.n == 0)
        goto done;
    int64_t s = 0;
    while (s < sg.n) {
        Py_BEGIN_ALLOW_THREADS
        s = er_process(st, &sg, s);
        if (s == sg.n)
            er_segment_done(st, &sg);
        Py_END_ALLOW_THREADS
        if (!er_events_to_list(st, out)) {
            Py_CLEAR(out);
            goto done;
        }
    }
done:
    PyBuffer_Release(&cur);
    if (logic.obj)
        PyBuffer_Release(&logic);
    if (have_volt)
        PyBuffer_Release(&volt);
    if (have_sat)
        PyBuffer_Release(&sat);
    return out;
}

static PyObject *er_energy_finish(er_energy_s *st, PyObject *Py_UNUSED(ignored))
{
    er_segment_s none = {0};
    none.abs0 = st->prev_abs + 1;
    if (st->state == ER_ST_HIGH) {
        er_event_s *ev = er_event_new(st, ER_EV_UNPAIRED_RISE);
        ev->a = st->win.a;
        ev->b = st->prev_abs;
    } else if (st->state == ER_ST_PEND) {
        er_confirm_fall(st, &none, 0);
    }
    er_resolve_held(st, 0);
    st->state = ER_ST_START;
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    if (!er_events_to_list(st, out))
        Py_CLEAR(out);
    return out;
}

static PyMethodDef er_energy_methods[] = {
    {"feed", (PyCFunction)er_energy_feed, METH_VARARGS,
     "feed(current, voltage, logic, saturated, abs0) -> list of events\n\n"
     "Process one contiguous segment: current float64[n] or float32[n] (A), voltage\n"
     "float64[n], float32[n] or a float (V; every sum in double), logic uint8[n], saturated\n"
     "bool/uint8[n] or None, abs0 the absolute index of the first sample. Events: (0, a, b,\n"
     "n, energy_j, baseline_w, edge_error_j, baseline_source, lost, saturated, glitch) for\n"
     "a window; (1, a, b) glitch; (2, f, 0) fall without rise;\n"
     "(3, a, last) rise without fall."},
    {"finish", (PyCFunction)er_energy_finish, METH_NOARGS,
     "finish() -> list of events: close the capture (pending fall, held baseline, open window)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject er_energy_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "energyrig.energy._energy.Integrator",
    .tp_basicsize = sizeof(er_energy_s),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Integrator(period_s, trigger_bit, active_high, pulse_samples, guard_samples, "
              "baseline_samples): streaming trigger windows and v*i integration.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)er_energy_init,
    .tp_dealloc = (destructor)er_energy_dealloc,
    .tp_methods = er_energy_methods,
};

static struct PyModuleDef er_energy_module = {
    PyModuleDef_HEAD_INIT, "_energy",
    "Streaming trigger windows and v*i integration (see energyrig.energy.windows).", -1,
    NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__energy(void)
{
    if (PyType_Ready(&er_energy_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&er_energy_module);
    if (!m)
        return NULL;
    Py_INCREF(&er_energy_type);
    if (PyModule_AddObject(m, "Integrator", (PyObject *)&er_energy_type) < 0) {
        Py_DECREF(&er_energy_type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
