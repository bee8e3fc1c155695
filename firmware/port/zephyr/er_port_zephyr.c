/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Zephyr port (core/er_port.h): the trigger on the devicetree's /zephyr,user
 * trigger-gpios, the CPU's cycle counter (timing API), the zephyr,console UART, a static
 * arena, and the batch on a thread whose painted stack gives its high-water mark.
 * Every Zephyr API, macro and Kconfig symbol used here is in VERIFIED.md with the Zephyr
 * file it was checked in.
 */
#include "er_port_zephyr.h"

#include <errno.h>

#include <mbedtls/version.h>
#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>
#if defined(CONFIG_TIMING_FUNCTIONS)
#include <zephyr/timing/timing.h>
#endif
#if defined(CONFIG_CLOCK_CONTROL_NRF)
#include <zephyr/drivers/clock_control/nrf_clock_control.h>
#include <zephyr/sys/notify.h>
#include <zephyr/sys/onoff.h>
#endif
#if defined(CONFIG_ARCH_POSIX)
#include "er_native_clock_bottom.h"
#endif

#include "er_ops_conditions.h"
#include "er_port.h"
#include "er_stack.h"

#define ER_USER_NODE DT_PATH(zephyr_user)

#if !DT_NODE_HAS_PROP(ER_USER_NODE, trigger_gpios)
#error "no trigger pin: add / { zephyr,user { trigger-gpios = <...>; }; } to the board overlay"
#endif

#define ER_NS_PER_S 1000000000U

static const struct gpio_dt_spec trigger = GPIO_DT_SPEC_GET(ER_USER_NODE, trigger_gpios);
static const struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

/* No alignment needed: er_arena_alloc aligns every buffer itself. */
static uint8_t arena_buf[CONFIG_ER_ARENA_SIZE];
K_THREAD_STACK_DEFINE(measured_stack, CONFIG_ER_MEASURED_STACK_SIZE);
static struct k_thread measured_thread;

static struct er_port_info_s info = {
	.board = CONFIG_BOARD_TARGET,
	.crypto_backend = "mbedtls-" MBEDTLS_VERSION_STRING,
	.crypto_conditions = er_crypto_conditions,
};

/* ---- cycle counter and time ---- */

/*
 * Two counters. Cycles (er_port_cycles, cycle_hz): with CONFIG_TIMING_FUNCTIONS the timing
 * API's counter, the CPU's own cycle counter (DWT CYCCNT on Cortex-M, CCOUNT on Xtensa);
 * without it the time counter. Time (er_port_time_ns): the kernel's hardware cycle counter
 * (the system timer), which keeps counting while the CPU sleeps in idle, where the DWT stops;
 * its resolution is the system timer's (30.5 us on the nRF RTC), so a batch's finer time is
 * cycles / cycle_hz. On native_sim the time counter is the host's monotonic clock in ns
 * (er_native_clock_bottom.c): its CPU is infinitely fast, simulated time passes only while it
 * sleeps or busy-waits, so a batch took no simulated time at all (cycles:0, elapsed_ns:0).
 * Times there are the host's, not a board's.
 *
 * A 32-bit counter is widened to 64 bits by summing the intervals between reads, each of
 * which may hold one wrap at most: a timer reads every such counter four times per wrap
 * period (every 16.8 s for a 64 MHz DWT), so two reads are never a wrap apart.
 */
#define ER_READS_PER_WRAP 4U

/* a * b / c, split so that no product overflows 64 bits (b, c < 2^32). */
static uint64_t mul_div(uint64_t a, uint32_t b, uint32_t c)
{
	return a / c * b + a % c * b / c;
}

static uint32_t sys_hz;

#if !defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER) && !defined(CONFIG_ARCH_POSIX)
#define ER_SYS_WIDENED 1
static uint32_t sys_last;
static uint64_t sys_total;
#endif

static uint64_t sys_cycles(void)
{
#if defined(CONFIG_ARCH_POSIX)
	return er_native_clock_ns();
#elif defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
	return k_cycle_get_64();
#else
	unsigned int key = irq_lock();
	uint32_t now = k_cycle_get_32();

	sys_total += (uint32_t)(now - sys_last);
	sys_last = now;
	uint64_t total = sys_total;

	irq_unlock(key);
	return total;
#endif
}

#if defined(CONFIG_TIMING_FUNCTIONS)
static timing_t cpu_last;
static uint64_t cpu_total;

static uint64_t cpu_cycles(void)
{
	unsigned int key = irq_lock();
	timing_t now = timing_counter_get();

	/* The interval between two readings, one wrap included (timing.h's contract). */
	cpu_total += timing_cycles_get(&cpu_last, &now);
	cpu_last = now;
	uint64_t total = cpu_total;

	irq_unlock(key);
	return total;
}
#endif

static void widen_tick(struct k_timer *timer)
{
	(void)timer;
	(void)sys_cycles();
#if defined(CONFIG_TIMING_FUNCTIONS)
	(void)cpu_cycles();
#endif
}

K_TIMER_DEFINE(widen_timer, widen_tick, NULL);

/* Starts the counters; returns the rate of the cycle counter in Hz. */
static uint32_t counters_init(void)
{
	uint32_t fastest_32bit = 0;

#if defined(CONFIG_ARCH_POSIX)
	sys_hz = ER_NS_PER_S;
#else
	sys_hz = (uint32_t)sys_clock_hw_cycles_per_sec();
#endif
#if defined(ER_SYS_WIDENED)
	fastest_32bit = sys_hz;
#endif
#if defined(CONFIG_TIMING_FUNCTIONS)
	timing_init();
	timing_start();
	uint32_t cycle_hz = (uint32_t)timing_freq_get();

	(void)cpu_cycles();
	if (cycle_hz > fastest_32bit) {
		fastest_32bit = cycle_hz;
	}
#else
	uint32_t cycle_hz = sys_hz;
#endif
	if (fastest_32bit > 0) {
		uint64_t ms = (1000ULL << 32) / ER_READS_PER_WRAP / fastest_32bit;
		int32_t period = ms > INT32_MAX ? INT32_MAX : (int32_t)ms;

		k_timer_start(&widen_timer, K_MSEC(period), K_MSEC(period));
	}
	return cycle_hz;
}

/*
 * The CPU clock: the board's CONFIG_ER_CPU_HZ, else the rate of the timing API's counter
 * (DWT CYCCNT and Xtensa CCOUNT count CPU clock cycles, so their rate is the clock the CPU
 * runs at), else the devicetree's cpu@0 clock-frequency, else 0 (unknown).
 */
static uint32_t cpu_hz(uint32_t cycle_hz)
{
	if (CONFIG_ER_CPU_HZ > 0) {
		return CONFIG_ER_CPU_HZ;
	}
#if defined(CONFIG_TIMING_FUNCTIONS)
	return cycle_hz;
#else
	(void)cycle_hz;
	return DT_PROP_OR(DT_PATH(cpus, cpu_0), clock_frequency, 0);
#endif
}

uint64_t er_port_cycles(void)
{
#if defined(CONFIG_TIMING_FUNCTIONS)
	return cpu_cycles();
#else
	return sys_cycles();
#endif
}

uint64_t er_port_time_ns(void)
{
	return mul_div(sys_cycles(), ER_NS_PER_S, sys_hz);
}

/*
 * Quiet spans (core/er_port.h): with the timing API, interrupts are masked (irq_lock), so no
 * UART receive interrupt, no system timer interrupt and no counter widening (widen_tick)
 * lands in a window or a batch's run, in its cycles, its energy or its stack mark: the CPU's
 * cycle counter needs no interrupt to count. Without the timing API the cycles are the system
 * timer's, and a SysTick counts past one reload period (2^24 cycles) only through its
 * interrupt: interrupts stay on there (mps2/an385 on QEMU). native_sim needs no mask: no
 * interrupt preempts code that runs, its CPU being infinitely fast. hello's "window_irqs"
 * condition says which.
 */
unsigned int er_port_quiet_begin(void)
{
#if defined(CONFIG_TIMING_FUNCTIONS)
	return irq_lock();
#else
	return 0;
#endif
}

void er_port_quiet_end(unsigned int key)
{
#if defined(CONFIG_TIMING_FUNCTIONS)
	irq_unlock(key);
#else
	(void)key;
#endif
}

/*
 * A window's stamps are the counters as read (er_runner.c converts nothing inside the
 * window). Time: the kernel's 64-bit counter, or its 32-bit one widened (a short IRQ lock
 * and an addition: the SysTick's 32 bits wrap every 172 s at 25 MHz, within a long batch).
 * Cycles: the 32-bit timing counter as read; its wraps (every 67 s at 64 MHz) are counted
 * from the time span. A window is quiet (interrupts masked) with the timing API: the CPU
 * runs through it without sleeping, so its time is cycles / cycle_hz; the system timer,
 * whose SysTick loses its reload periods while its interrupt is masked, only counts the
 * wraps, which it does for any window shorter than 2^32 cycles (67 s at 64 MHz, 51 s at
 * 84 MHz); longer ones only where the system timer keeps counting masked (the nRF RTC).
 */
void er_port_stamp(struct er_port_stamp_s *stamp)
{
#if defined(CONFIG_TIMING_FUNCTIONS)
	stamp->cycles = timing_counter_get();
#endif
	stamp->time = sys_cycles();
}

void er_port_span(const struct er_port_stamp_s *from, const struct er_port_stamp_s *to,
		  uint64_t *cycles, uint64_t *elapsed_ns)
{
	uint64_t sys = to->time - from->time;

#if defined(CONFIG_TIMING_FUNCTIONS)
	timing_t c0 = (timing_t)from->cycles;
	timing_t c1 = (timing_t)to->cycles;
	uint64_t within_wrap = timing_cycles_get(&c0, &c1);
	uint64_t expected = mul_div(sys, info.cycle_hz, sys_hz);
	uint64_t wraps = expected > within_wrap ? (expected - within_wrap + (1ULL << 31)) >> 32 : 0;

	*cycles = within_wrap + (wraps << 32);
	*elapsed_ns = mul_div(*cycles, ER_NS_PER_S, info.cycle_hz);
#else
	*cycles = sys;
	*elapsed_ns = mul_div(sys, ER_NS_PER_S, sys_hz);
#endif
}

/* ---- trigger, info, arena, idle ---- */

void er_port_trigger(int high, int accel)
{
	(void)accel; /* the simulated bench's power model reads it; a GPIO has one level */
	(void)gpio_pin_set_dt(&trigger, high);
}

uint32_t er_port_trigger_drops(void)
{
	return 0;
}

const struct er_port_info_s *er_port_info(void)
{
	info.platform_conditions = er_port_zephyr_conditions();
	return &info;
}

/* The boards run at their devicetree clock (the nRF52840 at 64 MHz has no other): no
 * levels in info, so the clock is not settable. */
int er_port_set_clock(uint32_t hz)
{
	ARG_UNUSED(hz);
	return -ENOTSUP;
}

void er_port_arena(uint8_t **base, size_t *size)
{
	*base = arena_buf;
	*size = sizeof(arena_buf);
}

void er_port_idle_ms(uint32_t ms)
{
	(void)k_msleep((int32_t)ms);
}

/* ---- measured batch ---- */

struct measured_s {
	int (*fn)(void *);
	void *arg;
	int ret;
};

static void measured_entry(void *p1, void *p2, void *p3)
{
	struct measured_s *m = p1;

	(void)p2;
	(void)p3;
	/* No other thread (the system work queue is cooperative at a higher priority) takes
	 * the CPU during the batch, the settle idle included; interrupts are kept out of the op
	 * runs and the window by the core's quiet spans (er_port_quiet_begin). */
	k_sched_lock();
	m->ret = m->fn(m->arg);
	k_sched_unlock();
}

/*
 * Runs fn on a fresh thread (k_thread_create paints its stack with CONFIG_INIT_STACKS),
 * at the caller's priority, and waits for it; *depth is the part of the stack written.
 */
static int run_on_thread(int (*fn)(void *), void *arg, size_t *depth)
{
	struct measured_s m = {.fn = fn, .arg = arg};
	size_t unused = 0;

	k_thread_create(&measured_thread, measured_stack, K_THREAD_STACK_SIZEOF(measured_stack),
			measured_entry, &m, NULL, NULL, k_thread_priority_get(k_current_get()), 0,
			K_NO_WAIT);
	(void)k_thread_join(&measured_thread, K_FOREVER);
	if (k_thread_stack_space_get(&measured_thread, &unused) != 0) {
		*depth = 0;
	} else {
		*depth = measured_thread.stack_info.size - unused;
	}
	return m.ret;
}

/* What the thread's entry frames take below the stack top is not fn's. */
static struct er_stack_meter_s meter = ER_STACK_METER_INIT(run_on_thread);

int er_port_run_measured(int (*fn)(void *), void *arg, size_t *stack_used)
{
	return er_stack_run_measured(&meter, fn, arg, stack_used);
}

/* ---- console UART ---- */

void er_port_write(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uart_poll_out(console, (unsigned char)buf[i]);
	}
}

#if defined(CONFIG_UART_INTERRUPT_DRIVEN)
/* Bytes from the receive interrupt; a full queue drops them (the line reader then
 * answers the damaged line with an error). */
K_MSGQ_DEFINE(rx_queue, 1, CONFIG_ER_RX_QUEUE_SIZE, 1);

static void console_isr(const struct device *dev, void *user_data)
{
	uint8_t byte;

	(void)user_data;
	if (!uart_irq_update(dev) || !uart_irq_rx_ready(dev)) {
		return;
	}
	while (uart_fifo_read(dev, &byte, 1) == 1) {
		(void)k_msgq_put(&rx_queue, &byte, K_NO_WAIT);
	}
}

static int console_rx_init(void)
{
	int ret = uart_irq_callback_user_data_set(console, console_isr, NULL);

	if (ret != 0) {
		return ret;
	}
	uart_irq_rx_enable(console);
	/* A byte the host sent while the board booted, before the interrupt was on, raises no
	 * interrupt on some UARTs (QEMU's CMSDK UART: the firmware then never read again). */
	unsigned int key = irq_lock();
	unsigned char byte;

	while (uart_poll_in(console, &byte) == 0) {
		(void)k_msgq_put(&rx_queue, &byte, K_NO_WAIT);
	}
	irq_unlock(key);
	return 0;
}

size_t er_port_zephyr_read(uint8_t *buf, size_t cap)
{
	size_t n = 1;

	(void)k_msgq_get(&rx_queue, &buf[0], K_FOREVER);
	while (n < cap && k_msgq_get(&rx_queue, &buf[n], K_NO_WAIT) == 0) {
		n++;
	}
	return n;
}
#else
/* A UART driver without the interrupt-driven API (native_sim's PTY UART): polling. */
static int console_rx_init(void)
{
	return 0;
}

size_t er_port_zephyr_read(uint8_t *buf, size_t cap)
{
	for (;;) {
		size_t n = 0;

		while (n < cap && uart_poll_in(console, &buf[n]) == 0) {
			n++;
		}
		if (n > 0) {
			return n;
		}
		(void)k_msleep(CONFIG_ER_POLL_MS);
	}
}
#endif

#if defined(CONFIG_CLOCK_CONTROL_NRF)
/*
 * The nRF's HFCLK runs from its RC oscillator (HFINT) unless someone requests the crystal:
 * times computed as cycles / cpu_hz would then be nominal and the energy that of RC
 * operation. The request is held for good and spin-waits for the crystal to start (under a
 * millisecond). Nothing else is told of a failure: hello's cpu_clock_source reads the clock's
 * state on each hello ("hfxo", or "hfint-rc" when the crystal did not start).
 */
static struct onoff_client hfxo_client;

static void request_hfxo(void)
{
	struct onoff_manager *mgr = z_nrf_clock_control_get_onoff(CLOCK_CONTROL_NRF_SUBSYS_HF);
	int result = 0;

	if (mgr == NULL) {
		return;
	}
	sys_notify_init_spinwait(&hfxo_client.notify);
	if (onoff_request(mgr, &hfxo_client) < 0) {
		return;
	}
	while (sys_notify_fetch_result(&hfxo_client.notify, &result) == -EAGAIN) {
	}
}
#endif

int er_port_zephyr_init(void)
{
	if (!device_is_ready(console)) {
		return -ENODEV;
	}
#if defined(CONFIG_CLOCK_CONTROL_NRF)
	request_hfxo();
#endif
	int ret = console_rx_init();

	if (ret != 0) {
		return ret;
	}
	info.cycle_hz = counters_init();
	info.cpu_hz = cpu_hz(info.cycle_hz);
	/* Without its trigger the board cannot be measured, but it can still say why: hello's
	 * port_status carries the code and run and mark are refused. */
	info.init_status = device_is_ready(trigger.port)
				   ? gpio_pin_configure_dt(&trigger, GPIO_OUTPUT_INACTIVE)
				   : -ENODEV;
	return 0;
}
