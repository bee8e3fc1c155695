/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The firmware's port to the MPS2 AN386 (Cortex-M4) as QEMU 7.2 emulates it
 * (qemu-system-arm -machine mps2-an386), bare metal: no kernel, no interrupt taken.
 *
 * - Link: UART0 (CMSDK APB UART, 0x40004000). QEMU holds a byte back until the guest read
 *   the one before, so nothing is lost. While no byte is there the core waits in WFI for
 *   UART0's receive interrupt (README.md, "Waiting").
 * - Waiting: interrupts stay masked (PRIMASK, set once at start): no handler ever runs, so
 *   none lands in a window, its cycles or its stack. WFI still wakes on an enabled pending
 *   interrupt; the wait clears it at the device and the NVIC and enables its NVIC line only
 *   while it waits. An idle (er_port_idle_ms) waits in WFI on TIMER0 (CMSDK APB timer)
 *   loaded for the span; the cycle counter decides when it has passed.
 * - Cycles: the core's SysTick on the processor clock (25 MHz, QEMU's SYSCLK), free-running,
 *   no interrupt. QEMU 7.2 implements no DWT (its CYCCNT never counts; README.md). The
 *   24-bit counter's wraps are counted from the FPGA's 100 Hz counter (FPGAIO CLK100HZ),
 *   which never wraps in practice, so a span of any length is counted exactly.
 * - Trigger: bit 0 of CMSDK AHB GPIO0 (0x40010000), the board's pin; QEMU discards GPIO
 *   writes, so each edge is also written to UART1 (0x40005000) as a line carrying the level,
 *   the cycle counter at the edge, the accelerator flag and the op family's wire id
 *   (TRIGGER_WIRE.md): "<0|1> <cycles as 16 hex digits> <0|1> <family>\n" (README.md). With
 *   -icount the counter is virtual time, the same on every run.
 * - Stack: the batch runs on its own painted stack (call_on_stack); no interrupt can push a
 *   frame on it.
 * - Clock: QEMU counts instructions, not a clock, so the clock is a figure of the port: the
 *   board runs at one of cpu_hz_levels (er_port_set_clock, the `clock` command; 25 MHz from
 *   reset), which is its cpu_hz and cycle_hz. A span's cycles are the same at every clock;
 *   its time is cycles / clock (elapsed_ns, idle). The bridge (energyrig-m4-dut) learns the
 *   clock from the replies that state it and places the fall of a batch by it.
 */
#include "er_port_qemu_m4.h"

#include <errno.h>
#include <string.h>

#include <mbedtls/memory_buffer_alloc.h>
#include <mbedtls/version.h>

#include "er_ops_conditions.h"
#include "er_port.h"
#include "er_stack.h"
#include "er_op.h"

#define ER_REG(addr) (*(volatile uint32_t *)(addr))

/* SysTick (ARMv7-M B3.3) */
#define SYST_CSR ER_REG(0xE000E010u)
#define SYST_RVR ER_REG(0xE000E014u)
#define SYST_CVR ER_REG(0xE000E018u)
#define SYST_CSR_ENABLE_CPUCLK 0x5u /* ENABLE, CLKSOURCE = processor clock, no TICKINT */
#define SYST_BITS 24u
#define SYST_MASK ((1u << SYST_BITS) - 1u)

/* CMSDK APB UART */
#define UART0_BASE 0x40004000u
#define UART1_BASE 0x40005000u
#define UART_DATA(b) ER_REG((b) + 0x00u)
#define UART_STATE(b) ER_REG((b) + 0x04u)
#define UART_CTRL(b) ER_REG((b) + 0x08u)
#define UART_INTCLEAR(b) ER_REG((b) + 0x0Cu)
#define UART_BAUDDIV(b) ER_REG((b) + 0x10u)
#define UART_STATE_TXFULL 0x1u
#define UART_STATE_RXFULL 0x2u
#define UART_CTRL_TX_RX 0x3u
#define UART_CTRL_RXINTEN 0x8u
#define UART_INT_RX 0x2u

/* CMSDK APB timer 0: counts VALUE down at the 25 MHz PCLK, interrupts at 0 */
#define TIMER0_CTRL ER_REG(0x40000000u)
#define TIMER0_VALUE ER_REG(0x40000004u)
#define TIMER0_RELOAD ER_REG(0x40000008u)
#define TIMER0_INTCLEAR ER_REG(0x4000000Cu)
#define TIMER_CTRL_EN_INTEN 0x9u
#define TIMER_MAX 0xFFFFFFFFu

/* NVIC lines of mps2-an385/an386 (QEMU hw/arm/mps2.c): UART0 RX 0, TIMER0 8 */
#define NVIC_ISER0 ER_REG(0xE000E100u)
#define NVIC_ICER0 ER_REG(0xE000E180u)
#define NVIC_ICPR0 ER_REG(0xE000E280u)
#define IRQ_UART0_RX 0u
#define IRQ_TIMER0 8u

/* CMSDK AHB GPIO0 */
#define GPIO0_DATAOUT ER_REG(0x40010004u)
#define GPIO0_OUTENSET ER_REG(0x40010010u)
#define ER_TRIGGER_PIN 0x1u

/* FPGA IO: 100 Hz counter since reset */
#define FPGAIO_CLK100HZ ER_REG(0x40028014u)

#define ER_SYSCLK_HZ 25000000u /* QEMU mps2.c SYSCLK_FRQ: SysTick, UARTs, timers */
#define ER_BAUD 115200u
#define ER_NS_PER_S 1000000000u

#define ER_ARENA_BYTES (256u * 1024u)
#define ER_MBEDTLS_HEAP_BYTES (64u * 1024u)
#define ER_STACK_BYTES (16u * 1024u)
#define ER_STACK_PAINT 0xaau

static uint8_t arena_buf[ER_ARENA_BYTES];
static unsigned char mbedtls_heap[ER_MBEDTLS_HEAP_BYTES];
static _Alignas(8) uint8_t stack_buf[ER_STACK_BYTES];
static struct er_port_stamp_s boot;
static const struct er_op_s *const *watched_op; /* the session's prepared-op slot */
static int in_batch;                            /* inside er_port_run_measured() */

#define ER_STR2(x) #x
#define ER_STR(x) ER_STR2(x)

static const struct er_condition_s platform_conditions[] = {
	{"optimization", ER_OPTIMIZATION, 0},
	{"cpu_clock_source", "qemu-virtual", 0},
	{"regulator", "unknown", 0},
	{"caches", "none", 0},
	{"trace_unit", "off", 0},
	{"idle", "wfi", 0},
	{NULL, NULL, 0},
};

/* The clocks the board can run at, Hz: a Cortex-M4's range (the nRF52840's 64 MHz, an
 * STM32F4's 16 MHz HSI) and the SysTick's 25 MHz it starts at. */
static const uint32_t cpu_hz_levels[] = {16000000u, 25000000u, 32000000u, 48000000u,
					 64000000u, 0};

static struct er_port_info_s info = {
	.board = "mps2-an386",
	.cpu_hz = ER_SYSCLK_HZ,
	.cycle_hz = ER_SYSCLK_HZ,
	.cpu_hz_levels = cpu_hz_levels,
	.crypto_backend = "mbedtls-" MBEDTLS_VERSION_STRING,
	.crypto_conditions = er_crypto_conditions,
	.platform_conditions = platform_conditions,
	.init_status = 0,
};

const struct er_port_info_s *er_port_info(void)
{
	return &info;
}

int er_port_set_clock(uint32_t hz)
{
	if (hz == 0) {
		return -EINVAL;
	}
	info.cpu_hz = info.cycle_hz = hz;
	return 0;
}

/* ---- counters ---- */

/* a * b / c, split so that no product overflows 64 bits (b, c < 2^32). */
static uint64_t mul_div(uint64_t a, uint32_t b, uint32_t c)
{
	return a / c * b + a % c * b / c;
}

void er_port_stamp(struct er_port_stamp_s *stamp)
{
	stamp->cycles = SYST_CVR;
	stamp->time = FPGAIO_CLK100HZ;
}

/* Cycles between two stamps. SysTick counts down; within one wrap the difference is exact,
 * the 100 Hz counter (10 ms = 250 000 cycles, far below half a wrap, 8.4 M) says how many
 * wraps passed. No division: the trigger calls it inside the window's stack. */
static uint64_t span_cycles(const struct er_port_stamp_s *from, const struct er_port_stamp_s *to)
{
	uint64_t within = (uint32_t)(from->cycles - to->cycles) & SYST_MASK;
	uint64_t expected = (to->time - from->time) * (ER_SYSCLK_HZ / 100u);
	uint64_t wraps = expected > within
				 ? (expected - within + (1u << (SYST_BITS - 1u))) >> SYST_BITS
				 : 0;

	return within + (wraps << SYST_BITS);
}

void er_port_span(const struct er_port_stamp_s *from, const struct er_port_stamp_s *to,
		  uint64_t *cycles, uint64_t *elapsed_ns)
{
	*cycles = span_cycles(from, to);
	*elapsed_ns = mul_div(*cycles, ER_NS_PER_S, info.cycle_hz);
}

uint64_t er_port_cycles(void)
{
	struct er_port_stamp_s now;

	er_port_stamp(&now);
	return span_cycles(&boot, &now);
}

uint64_t er_port_time_ns(void)
{
	return mul_div(er_port_cycles(), ER_NS_PER_S, info.cycle_hz);
}

/* ---- trigger ---- */

static void uart_put(uint32_t base, char c)
{
	while (UART_STATE(base) & UART_STATE_TXFULL) {
	}
	UART_DATA(base) = (uint8_t)c;
}

void er_port_trigger(int high, int accel)
{
	static const char hex[] = "0123456789abcdef";
	/* Looked up before the edge: a batch's rising edge carries its op's family. */
	uint16_t family = high && in_batch && watched_op != NULL ? er_family_id((*watched_op)->family) : 0;

	if (high) {
		GPIO0_DATAOUT |= ER_TRIGGER_PIN;
	} else {
		GPIO0_DATAOUT &= ~ER_TRIGGER_PIN;
	}
	uint64_t at = er_port_cycles();

	uart_put(UART1_BASE, high ? '1' : '0');
	uart_put(UART1_BASE, ' ');
	for (int shift = 60; shift >= 0; shift -= 4) {
		uart_put(UART1_BASE, hex[(at >> shift) & 0xfu]);
	}
	uart_put(UART1_BASE, ' ');
	uart_put(UART1_BASE, accel ? '1' : '0');
	uart_put(UART1_BASE, ' ');
	uart_put(UART1_BASE, (char)('0' + family)); /* one digit: ids 0 .. 9 (er_families, core/er_family.c) */
	uart_put(UART1_BASE, '\n');
}

uint32_t er_port_trigger_drops(void)
{
	return 0;
}

/* Interrupts are masked from start-up (PRIMASK) and only wake WFI: every span is quiet. */
unsigned int er_port_quiet_begin(void)
{
	return 0;
}

void er_port_quiet_end(unsigned int key)
{
	(void)key;
}

/* ---- arena, idle ---- */

void er_port_arena(uint8_t **base, size_t *size)
{
	*base = arena_buf;
	*size = sizeof(arena_buf);
}

/* The NVIC's pending bit of irq; its device's interrupt is cleared first (the line is a level). */
static void clear_pending(uint32_t irq)
{
	NVIC_ICPR0 = 1u << irq;
}

/* Sleeps until an enabled interrupt is pending (PRIMASK set: none is taken). */
static void wait_for_interrupt(void)
{
	__asm volatile("dsb\n\twfi" ::: "memory");
}

/* Waits in WFI on TIMER0, loaded for what is left of the span each time it wakes: the cycle
 * counter, not the timer, says when the span has passed. The timer counts the SysTick's
 * 25 MHz, so the span's cycles are its ticks. */
void er_port_idle_ms(uint32_t ms)
{
	uint64_t start = er_port_cycles();
	uint64_t span = (uint64_t)ms * (info.cycle_hz / 1000u);
	uint64_t passed;

	NVIC_ISER0 = 1u << IRQ_TIMER0;
	while ((passed = er_port_cycles() - start) < span) {
		uint64_t left = span - passed;

		TIMER0_RELOAD = TIMER_MAX;
		TIMER0_VALUE = left < TIMER_MAX ? (uint32_t)left : TIMER_MAX;
		TIMER0_CTRL = TIMER_CTRL_EN_INTEN;
		wait_for_interrupt();
		TIMER0_CTRL = 0;
		TIMER0_INTCLEAR = 1u;
		clear_pending(IRQ_TIMER0);
	}
	NVIC_ICER0 = 1u << IRQ_TIMER0;
}

/* ---- measured batch ---- */

/* Calls fn(arg) with the stack pointer at top, and returns on the caller's stack. */
#define ER_UNUSED __attribute__((unused))
__attribute__((naked, noinline)) static int call_on_stack(ER_UNUSED int (*fn)(void *),
							  ER_UNUSED void *arg, ER_UNUSED void *top)
{
	__asm volatile("push {r4, lr}\n\t"
		       "mov r4, sp\n\t"
		       "mov sp, r2\n\t"
		       "mov r2, r0\n\t"
		       "mov r0, r1\n\t"
		       "blx r2\n\t"
		       "mov sp, r4\n\t"
		       "pop {r4, pc}\n\t");
}

/* Runs fn on stack_buf, painted first; *depth is how deep it was written. */
static int run_painted(int (*fn)(void *), void *arg, size_t *depth)
{
	size_t untouched = 0;

	memset(stack_buf, ER_STACK_PAINT, sizeof(stack_buf));
	int ret = call_on_stack(fn, arg, stack_buf + sizeof(stack_buf));

	while (untouched < sizeof(stack_buf) && stack_buf[untouched] == ER_STACK_PAINT) {
		untouched++;
	}
	*depth = sizeof(stack_buf) - untouched;
	return ret;
}

static struct er_stack_meter_s meter = ER_STACK_METER_INIT(run_painted);

/* Only batches run here (a mark window does not): their edges carry the op's family. */
int er_port_run_measured(int (*fn)(void *), void *arg, size_t *stack_used)
{
	in_batch = 1;
	int ret = er_stack_run_measured(&meter, fn, arg, stack_used);

	in_batch = 0;
	return ret;
}

void er_port_qemu_m4_watch_op(const struct er_op_s *const *prepared)
{
	watched_op = prepared;
}

/* ---- link ---- */

void er_port_write(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uart_put(UART0_BASE, buf[i]);
	}
}

size_t er_port_qemu_m4_read(uint8_t *buf, size_t size)
{
	size_t n = 0;

	NVIC_ISER0 = 1u << IRQ_UART0_RX;
	while (!(UART_STATE(UART0_BASE) & UART_STATE_RXFULL)) {
		wait_for_interrupt(); /* a byte received since the check is pending: no sleep */
		UART_INTCLEAR(UART0_BASE) = UART_INT_RX;
		clear_pending(IRQ_UART0_RX);
	}
	NVIC_ICER0 = 1u << IRQ_UART0_RX;
	while (n < size && (UART_STATE(UART0_BASE) & UART_STATE_RXFULL)) {
		buf[n++] = (uint8_t)UART_DATA(UART0_BASE);
	}
	return n;
}

void er_port_qemu_m4_init(void)
{
	__asm volatile("cpsid i" ::: "memory"); /* no handler, ever: interrupts only wake WFI */
	for (uint32_t base = UART0_BASE; base <= UART1_BASE; base += UART1_BASE - UART0_BASE) {
		UART_BAUDDIV(base) = ER_SYSCLK_HZ / ER_BAUD;
		UART_CTRL(base) = UART_CTRL_TX_RX;
	}
	UART_CTRL(UART0_BASE) = UART_CTRL_TX_RX | UART_CTRL_RXINTEN;
	GPIO0_DATAOUT &= ~ER_TRIGGER_PIN;
	GPIO0_OUTENSET = ER_TRIGGER_PIN;
	SYST_RVR = SYST_MASK;
	SYST_CVR = 0;
	SYST_CSR = SYST_CSR_ENABLE_CPUCLK;
	er_port_stamp(&boot);
	/* Mbed TLS allocates from its own heap, as Zephyr's module does (its size: README.md). */
	mbedtls_memory_buffer_alloc_init(mbedtls_heap, sizeof(mbedtls_heap));
}
