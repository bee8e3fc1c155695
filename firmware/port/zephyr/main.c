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

	/* Without its console UART the board cannot tell anyone anything: the code goes to
	 * main's return value (visible to a debugger). A trigger that failed is reported by
	 * hello (port_status). */
	int ret = er_port_zephyr_init();

	if (ret != 0) {
		return ret;
	}
	er_proto_init(&proto, &er_catalogue);
	for (;;) {
		size_t n = er_port_zephyr_read(buf, sizeof(buf));

		er_proto_feed(&proto, buf, n);
	}
	return 0;
}
