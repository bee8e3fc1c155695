/* SPDX-License-Identifier: Apache-2.0 */
/*
 * energyrig firmware on Zephyr: the protocol (firmware/PROTOCOL.md) on the console UART,
 * the trigger on the devicetree's /zephyr,user trigger-gpios.
 */
#include "er_port_zephyr.h"
#include "er_proto.h"

int main(void)
{
	static struct er_proto_s proto;
	uint8_t buf[64];

	/* Without its trigger pin or UART the board cannot be measured nor tell anyone. */
	if (er_port_zephyr_init() != 0) {
		return 0;
	}
	er_proto_init(&proto, &er_catalogue);
	for (;;) {
		size_t n = er_port_zephyr_read(buf, sizeof(buf));

		er_proto_feed(&proto, buf, n);
	}
	return 0;
}
