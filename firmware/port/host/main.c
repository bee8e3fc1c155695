/* SPDX-License-Identifier: Apache-2.0 */
/*
 * energyrig-dut: the firmware's core and ops on Linux, the DUT of the simulated bench.
 * Speaks PROTOCOL.md on standard input/output (--stdio) or on a pseudo-terminal (--pty),
 * and publishes its trigger on the virtual trigger wire (--trigger-wire).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include "er_port_host.h"
#include "er_proto.h"

static struct er_proto_s proto;
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: energyrig-dut (--stdio | --pty) [--trigger-wire PATH] [--board NAME]\n"
		"\n"
		"The energyrig firmware (core and ops) built for Linux: the DUT of the simulated\n"
		"bench. Requests and replies are those of firmware/PROTOCOL.md; try 'help'.\n"
		"\n"
		"  --stdio              serve the protocol on standard input and output; exits at EOF\n"
		"  --pty                open a pseudo-terminal, print its path on standard output and\n"
		"                       serve it (like a board's UART) until SIGTERM or SIGINT\n"
		"  --trigger-wire PATH  send every trigger edge as a 16-byte record to the UNIX\n"
		"                       datagram socket PATH (firmware/TRIGGER_WIRE.md); never blocks,\n"
		"                       drops are counted in hello's trigger_drops\n"
		"  --board NAME         board name reported by hello (default: host)\n"
		"  -h, --help           this text\n"
		"\n"
		"example: printf 'hello\\nprep sha256 payload_bytes=1024\\nrun n=1000\\n' | "
		"energyrig-dut --stdio\n");
}

/* A pty master whose slave side is raw (no echo, no line editing), like a UART. */
static int open_pty(void)
{
	struct termios tio;
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
		return -1;
	}
	/* Keep a slave descriptor open: a client closing its side must not end the session. */
	int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (slave < 0 || tcgetattr(slave, &tio) != 0) {
		return -1;
	}
	cfmakeraw(&tio);
	if (tcsetattr(slave, TCSANOW, &tio) != 0) {
		return -1;
	}
	return master;
}

/* Feeds everything read from @p fd to the core until EOF or a lost link. */
static int serve(int fd)
{
	uint8_t buf[512];

	while (!stop && !er_port_host_link_lost()) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0) {
			return 0;
		}
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			perror("energyrig-dut: read");
			return 1;
		}
		er_proto_feed(&proto, buf, (size_t)n);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"stdio", no_argument, NULL, 's'},
		{"pty", no_argument, NULL, 'p'},
		{"trigger-wire", required_argument, NULL, 'w'},
		{"board", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *board = "host";
	const char *wire = NULL;
	int mode = 0;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'p':
			mode = c;
			break;
		case 'w':
			wire = optarg;
			break;
		case 'b':
			board = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (mode == 0 || optind != argc) {
		usage(stderr);
		return 2;
	}
	/*
	 * Die with the rig: a SIGKILLed rig cannot stop its DUT, and a batch may run for
	 * minutes. The check after prctl() closes the race with a parent that died before it.
	 */
	pid_t parent = getppid();

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
		return 1;
	}
	/* A vanished reader is a lost link (EPIPE), not a death; TERM and INT end the session. */
	struct sigaction sa = {.sa_handler = on_stop}; /* no SA_RESTART: read() returns EINTR */

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	int in_fd = 0;
	int out_fd = 1;

	if (mode == 'p') {
		in_fd = out_fd = open_pty();
		if (in_fd < 0) {
			perror("energyrig-dut: cannot open a pseudo-terminal");
			return 1;
		}
		printf("%s\n", ptsname(in_fd));
		fflush(stdout);
	}
	int ret = er_port_host_init(board, out_fd, wire);

	if (ret != 0) {
		fprintf(stderr, "energyrig-dut: cannot open the trigger wire %s: %s\n", wire,
			strerror(-ret));
		return 1;
	}
	er_proto_init(&proto, &er_catalogue);
	er_port_host_watch_op(&proto.op);
	ret = serve(in_fd);
	er_proto_release(&proto);
	return ret;
}
