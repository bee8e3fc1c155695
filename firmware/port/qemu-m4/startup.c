/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reset and vector table of the MPS2 AN386 port: copy .data, clear .bss, run newlib's
 * initialisers, call main. No interrupt is ever taken (the port masks them with PRIMASK;
 * they only wake its WFI waits); a fault stops the core (QEMU's monitor or gdb shows
 * where), and the host sees a link that no longer answers.
 */
#include <stdint.h>
#include <string.h>

extern uint32_t __data_start[];
extern uint32_t __data_end[];
extern uint32_t __data_load[];
extern uint32_t __bss_start[];
extern uint32_t __bss_end[];
extern uint32_t __stack_top[];

extern int main(void);
extern void __libc_init_array(void);
void er_reset(void);

static void er_fault(void)
{
	for (;;) {
		__asm volatile("bkpt #0");
	}
}

void er_reset(void)
{
	memcpy(__data_start, __data_load, (size_t)((uintptr_t)__data_end - (uintptr_t)__data_start));
	memset(__bss_start, 0, (size_t)((uintptr_t)__bss_end - (uintptr_t)__bss_start));
	__libc_init_array();
	(void)main();
	er_fault();
}

/* Initial stack pointer, reset, NMI, HardFault, MemManage, BusFault, UsageFault. */
__attribute__((section(".vectors"), used)) static void (*const vectors[])(void) = {
	(void (*)(void))__stack_top, er_reset, er_fault, er_fault, er_fault, er_fault, er_fault,
};
