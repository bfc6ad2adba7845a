// SPDX-License-Identifier: GPL-2.0
/*
 * qmp - a minimal QMP client for the QEMU rig (tests/qemu/): the test
 * VM's busybox has no socat and no python, and its nc speaks no unix
 * sockets.
 *
 *   qmp SOCKET COMMAND [ARGUMENTS-JSON] [COMMAND [ARGUMENTS-JSON]]...
 *
 * Connects to QEMU's QMP server on the unix socket SOCKET (retrying for
 * up to 10 s while QEMU starts), negotiates capabilities, then sends each
 * COMMAND ("query-migrate", or "migrate" followed by '{"uri": ...}') and
 * prints its reply, one line of JSON each; asynchronous events are
 * skipped.  A COMMAND is followed by ARGUMENTS-JSON when the next word
 * starts with '{'.  Exits 1 if a command failed (its error is printed),
 * 2 on a usage or connection error.
 *
 * "hmp WORDS..." as COMMAND runs a human monitor command and prints its
 * text output as is.  A QEMU that does not answer within 60 s kills the
 * client (SIGALRM): a hung VMM must not hang the rig.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

static char buf[1 << 20];
static size_t len;
static int fd;

/* The next line QEMU sends, without its newline; NULL at EOF. */
static char *next_line(void)
{
	static size_t consumed;
	char *nl;
	ssize_t n;

	if (consumed) {
		memmove(buf, buf + consumed, len - consumed);
		len -= consumed;
		consumed = 0;
	}
	while (!(nl = memchr(buf, '\n', len))) {
		if (len == sizeof(buf) - 1)
			return NULL;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return NULL;
		len += n;
	}
	*nl = '\0';
	if (nl > buf && nl[-1] == '\r')
		nl[-1] = '\0';
	consumed = nl + 1 - buf;
	return buf;
}

/* Send one command; return its reply line (not an event), or NULL. */
static char *command(const char *cmd)
{
	size_t off = 0, n = strlen(cmd);
	char *line;

	while (off < n) {
		ssize_t w = write(fd, cmd + off, n - off);

		if (w <= 0)
			return NULL;
		off += w;
	}
	while ((line = next_line())) {
		if (strstr(line, "\"return\"") || strstr(line, "\"error\""))
			return line;
	}
	return NULL;
}

/* Print the "return" string of a human-monitor-command reply, unescaped. */
static void print_hmp(const char *line)
{
	const char *p = strstr(line, "\"return\": \"");

	if (!p) {
		puts(line);
		return;
	}
	for (p += 11; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			switch (*p) {
			case 'n': putchar('\n'); break;
			case 'r': break;
			case 't': putchar('\t'); break;
			default: putchar(*p);
			}
		} else {
			putchar(*p);
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char cmd[8192];
	int i, tries, rc = 0;
	char *line;

	if (argc < 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: qmp SOCKET COMMAND [ARGS-JSON]...\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	alarm(60);
	for (tries = 0; ; tries++) {
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			return 2;
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		close(fd);
		if (tries == 100) {
			fprintf(stderr, "qmp: %s: %s\n", argv[1], strerror(errno));
			return 2;
		}
		usleep(100000);
	}
	line = next_line();			/* the greeting */
	if (!line || !strstr(line, "QMP")) {
		fprintf(stderr, "qmp: no QMP greeting on %s\n", argv[1]);
		return 2;
	}
	line = command("{\"execute\": \"qmp_capabilities\"}\n");
	if (!line || !strstr(line, "\"return\"")) {
		fprintf(stderr, "qmp: capabilities refused: %s\n", line ? line : "EOF");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		const char *args = NULL;
		int hmp = !strncmp(argv[i], "hmp ", 4);

		if (hmp)
			snprintf(cmd, sizeof(cmd),
				 "{\"execute\": \"human-monitor-command\", "
				 "\"arguments\": {\"command-line\": \"%s\"}}\n",
				 argv[i] + 4);
		else {
			const char *name = argv[i];

			if (i + 1 < argc && argv[i + 1][0] == '{')
				args = argv[++i];
			snprintf(cmd, sizeof(cmd),
				 "{\"execute\": \"%s\"%s%s}\n", name,
				 args ? ", \"arguments\": " : "", args ? args : "");
		}
		line = command(cmd);
		if (!line) {
			/* "quit" closes the socket before or after replying. */
			if (strstr(cmd, "\"quit\""))
				break;
			fprintf(stderr, "qmp: no reply to %s\n", cmd);
			return 2;
		}
		if (strstr(line, "\"error\"")) {
			fprintf(stderr, "qmp: %s", cmd);
			fprintf(stderr, "qmp: %s\n", line);
			rc = 1;
			continue;
		}
		if (hmp)
			print_hmp(line);
		else
			puts(line);
	}
	return rc;
}
