/*
 * echo: a message echo server and client over any Transputation transport, through the C
 * interface in transputation.h.
 *
 *   echo server TRANSPORT ADDR          accept one client, echo each message back until it
 *                                       closes; prints "listening on HOST:PORT" first
 *                                       (port 0 in ADDR: any free port)
 *   echo client TRANSPORT ADDR MSG...   send each MSG as one message, check the echo,
 *                                       print it, then close
 *
 * TRANSPORT is a transport string: tcp, tcp-bbr, mtcp:streams=4, udp:rate=500mbit, ...
 * Exit status: 0 on success, 1 when the transport or the peer failed (the library's
 * message goes to stderr), 2 on a usage error.
 *
 * Build (see the Makefile next to this file), from crates/transport-ffi:
 *   cargo build --release -p transputation-transport-ffi
 *   cc -std=c99 -Wall -Wextra -I include examples/c/echo.c \
 *      -L ../../target/release -ltransputation_ffi -Wl,-rpath,"$PWD/../../target/release" -o echo
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transputation.h"

/* Prints what failed, with the library's message and status name, and returns 1. */
static int fail(const char *what, tp_status status) {
    fprintf(stderr, "echo: %s failed: %s (%s)\n", what, tp_last_error(), tp_status_name((int)status));
    return 1;
}

/* Bounded waits, so that a missing or silent peer is an error within seconds. */
static tp_config echo_config(void) {
    tp_config cfg = {0}; /* zero fields take the library's defaults */
    cfg.io_timeout_ms = 10000;
    cfg.connect_attempts = 20; /* 100 ms apart: the client may start before the server */
    return cfg;
}

static void print_stats(const char *who, const tp_channel *ch, unsigned messages) {
    uint64_t sent = 0, received = 0;
    if (tp_stats(ch, &sent, &received) == TP_OK) {
        printf("%s: %u messages, sent %llu bytes, received %llu bytes\n", who, messages,
               (unsigned long long)sent, (unsigned long long)received);
    }
}

static int server(const char *transport, const char *addr) {
    tp_config cfg = echo_config();
    tp_listener *listener = tp_listen(transport, addr, &cfg);
    if (listener == NULL) {
        return fail("listen", tp_last_status());
    }
    char bound[64];
    tp_listener_addr(listener, bound, sizeof bound);
    printf("listening on %s\n", bound);
    fflush(stdout); /* whoever started us may be waiting for the port */

    tp_channel *ch = tp_accept(listener);
    tp_listener_free(listener);
    if (ch == NULL) {
        return fail("accept", tp_last_status());
    }
    unsigned count = 0;
    int rc = 0;
    for (;;) {
        uint8_t *msg;
        size_t len;
        tp_status st = tp_recv_message(ch, &msg, &len);
        if (st == TP_ERR_CLOSED) {
            break; /* the client is done */
        }
        if (st != TP_OK) {
            rc = fail("receive", st);
            break;
        }
        st = tp_send_message(ch, msg, len);
        tp_free_buffer(msg, len);
        if (st != TP_OK) {
            rc = fail("send", st);
            break;
        }
        count++;
    }
    if (rc == 0) {
        tp_status st = tp_close(ch);
        if (st != TP_OK) {
            rc = fail("close", st);
        } else {
            print_stats("server", ch, count);
        }
    }
    tp_channel_free(ch);
    return rc;
}

static int client(const char *transport, const char *addr, int count, char **messages) {
    tp_config cfg = echo_config();
    tp_channel *ch = tp_connect(transport, addr, &cfg);
    if (ch == NULL) {
        return fail("connect", tp_last_status());
    }
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++) {
        size_t sent_len = strlen(messages[i]);
        tp_status st = tp_send_message(ch, (const uint8_t *)messages[i], sent_len);
        if (st != TP_OK) {
            rc = fail("send", st);
            break;
        }
        uint8_t *echo;
        size_t len;
        st = tp_recv_message(ch, &echo, &len); /* flushes the message first */
        if (st != TP_OK) {
            rc = fail("receive", st);
            break;
        }
        if (len != sent_len || (len > 0 && memcmp(echo, messages[i], len) != 0)) {
            fprintf(stderr, "echo: message %d came back as %zu different bytes\n", i + 1, len);
            rc = 1;
        } else {
            printf("echo: %.*s\n", (int)len, (const char *)echo);
        }
        tp_free_buffer(echo, len);
    }
    if (rc == 0) {
        /* Close our direction, then wait for the server's end of the stream: it has then
           seen every message. */
        uint8_t *extra;
        size_t len;
        tp_status st = tp_close(ch);
        if (st != TP_OK) {
            rc = fail("close", st);
        } else if ((st = tp_recv_message(ch, &extra, &len)) != TP_ERR_CLOSED) {
            if (st == TP_OK) {
                tp_free_buffer(extra, len);
                fprintf(stderr, "echo: the server sent an unexpected message\n");
                rc = 1;
            } else {
                rc = fail("waiting for the server to close", st);
            }
        } else {
            print_stats("client", ch, (unsigned)count);
        }
    }
    tp_channel_free(ch);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "server") == 0) {
        return server(argv[2], argv[3]);
    }
    if (argc >= 4 && strcmp(argv[1], "client") == 0) {
        return client(argv[2], argv[3], argc - 4, argv + 4);
    }
    fprintf(stderr, "usage: %s server TRANSPORT ADDR\n"
                    "       %s client TRANSPORT ADDR MESSAGE...\n",
            argv[0], argv[0]);
    return 2;
}
