/* SPDX-License-Identifier: Apache-2.0 */
/*
 * energyrig firmware on the MPS2 AN386 (Cortex-M4, QEMU): the protocol
 * (firmware/PROTOCOL.md) on UART0, the trigger on GPIO0 pin 0 and its edges on UART1.
 */
#include "er_port_qemu_m4.h"
#include "er_proto.h"

int main(void)
{
	static struct er_proto_s proto;
	uint8_t buf[64];

	er_port_qemu_m4_init();
	er_proto_init(&proto, &er_catalogue);
	er_port_qemu_m4_watch_op(&proto.op);
	for (;;) {
		size_t n = er_port_qemu_m4_read(buf, sizeof(buf));

		er_proto_feed(&proto, buf, n);
	}
	return 0;
}
