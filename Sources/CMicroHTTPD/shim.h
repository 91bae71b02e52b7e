#ifndef CHIME_CMICROHTTPD_SHIM_H
#define CHIME_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <microhttpd.h>

// Fixed-argument wrappers for libmicrohttpd's variadic functions, which Swift cannot call.

/// The signature MHD_OPTION_UNESCAPE_CALLBACK expects: decode `s` in place, return its new length.
typedef size_t (*chime_mhd_unescape_callback)(void *cls, struct MHD_Connection *connection, char *s);

/// The signature MHD_OPTION_URI_LOG_CALLBACK expects: called with the request target as sent (path
/// and query) once the request line is complete, before libmicrohttpd splits the query into
/// arguments. The returned pointer becomes the request's context (the access handler's `*req_cls`).
typedef void *(*chime_mhd_uri_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// The daemon options Chime uses. Zero / NULL / -1 leaves an option out.
struct chime_mhd_config {
    unsigned int flags;
    uint16_t port;
    /// Bind to this address (a `struct sockaddr_in`), or NULL for all interfaces.
    const struct sockaddr *bind_address;
    /// A bound, listening socket to use instead of opening one, or -1.
    int listen_fd;
    unsigned int connection_limit;
    unsigned int connection_timeout;
    size_t connection_memory_limit;
    /// PEM text of the TLS key and certificate (both or neither).
    const char *tls_key;
    const char *tls_cert;
    MHD_AccessHandlerCallback handler;
    MHD_RequestCompletedCallback completed;
    MHD_NotifyConnectionCallback notify_connection;
    MHD_LogCallback logger;
    /// Replaces libmicrohttpd's decoding of `%HH` in the path and query arguments (it still turns
    /// `+` into a space in query arguments first), or NULL for the default.
    chime_mhd_unescape_callback unescape;
    /// Sees each request target before its query is split into arguments, or NULL.
    chime_mhd_uri_callback uri_log;
    void *context;
    /// Threads serving connections (each with its own epoll set; a connection stays on the thread
    /// it was given to), or 0 or 1 for the one internal thread.
    unsigned int thread_pool_size;
};

static inline struct MHD_Daemon *chime_mhd_start_daemon(const struct chime_mhd_config *config) {
    struct MHD_OptionItem options[20];
    int n = 0;
    if (config->logger != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)config->logger, config->context };
    }
    if (config->bind_address != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)config->bind_address };
    }
    if (config->listen_fd >= 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, config->listen_fd, NULL };
    }
    if (config->connection_limit > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, config->connection_limit, NULL };
    }
    if (config->connection_timeout > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout, NULL };
    }
    if (config->connection_memory_limit > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)config->connection_memory_limit, NULL };
    }
    if (config->tls_key != NULL && config->tls_cert != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)config->tls_key };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)config->tls_cert };
    }
    if (config->completed != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)config->completed, config->context };
    }
    if (config->notify_connection != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)config->notify_connection, config->context };
    }
    if (config->unescape != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)config->unescape, config->context };
    }
    if (config->uri_log != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)config->uri_log, config->context };
    }
    if (config->thread_pool_size > 1) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, config->thread_pool_size, NULL };
    }
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    return MHD_start_daemon(config->flags, config->port, NULL, NULL, config->handler, config->context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// The port the daemon listens on (0 when unknown, e.g. a Unix socket).
static inline uint16_t chime_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The client's address, or NULL.
static inline const struct sockaddr *chime_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// The per-connection pointer set in the connection-started notification, or NULL.
static inline void *chime_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// The connection's socket, or -1. Valid from the connection-started notification until the
/// connection-closed notification has returned (libmicrohttpd closes it after that).
static inline int chime_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// Cuts the query off a request target that libmicrohttpd is about to split into arguments (from
/// the URI log callback, which sees the target first): the target then ends right after its `?`,
/// so no argument is parsed. libmicrohttpd parses the request line in place in its own writable
/// buffer, which is what `uri` points into; only the byte after `?` is overwritten.
static inline void chime_mhd_drop_query(const char *uri) {
    char *question = strchr((char *)uri, '?');
    if (question != NULL) question[1] = '\0';
}

/// An eventfd for waking a poll loop (non-blocking, close-on-exec); <sys/eventfd.h> is not in Swift's Glibc module.
#include <sys/eventfd.h>
static inline int chime_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// accept4(2) with a non-blocking, close-on-exec socket (glibc declares it only with _GNU_SOURCE).
int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
static inline int chime_accept(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// Turns off Nagle's algorithm on a TCP socket Chime writes itself (HTTP/2, TLS): its answers are
/// small writes as they are ready, which Nagle would hold back until the peer's delayed ACK (up to
/// 40 ms on Linux). Nothing on a Unix socket.
#include <netinet/in.h>
#include <netinet/tcp.h>
static inline void chime_tcp_nodelay(int fd) {
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/// Bytes written to a socket that the peer has not acknowledged yet (SIOCOUTQ), or 0.
#include <sys/ioctl.h>
#include <linux/sockios.h>
static inline int chime_unsent_bytes(int fd) {
    int count = 0;
    return ioctl(fd, SIOCOUTQ, &count) == 0 ? count : 0;
}

/// poll(2)'s "the peer closed its writing side" event (POLLRDHUP, a Linux extension that glibc
/// only declares with _GNU_SOURCE).
static inline short chime_pollrdhup(void) { return 0x2000; }

/// epoll(7) for the stream writers (<sys/epoll.h> is not in Swift's Glibc module, and its packed
/// `struct epoll_event` is awkward to use from Swift): an instance, changes to its set, and a wait
/// that reports each ready socket as its token and its events.
#include <sys/epoll.h>
static const uint32_t chime_epoll_in = EPOLLIN;
static const uint32_t chime_epoll_out = EPOLLOUT;
static const uint32_t chime_epoll_rdhup = EPOLLRDHUP;
static const uint32_t chime_epoll_hup = EPOLLHUP;
static const uint32_t chime_epoll_err = EPOLLERR;
static const int chime_epoll_add = EPOLL_CTL_ADD;
static const int chime_epoll_modify = EPOLL_CTL_MOD;
static const int chime_epoll_delete = EPOLL_CTL_DEL;
static inline int chime_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
static inline int chime_epoll_control(int epoll, int operation, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = { .events = events, .data = { .u64 = token } };
    return epoll_ctl(epoll, operation, fd, &event);
}
/// Waits up to `timeout` ms (-1: without end) for at most `capacity` (at most 512) ready sockets.
static inline int chime_epoll_wait(int epoll, uint64_t *tokens, uint32_t *events, int capacity, int timeout) {
    struct epoll_event ready[512];
    int count = epoll_wait(epoll, ready, capacity < 512 ? capacity : 512, timeout);
    for (int index = 0; index < count; index++) {
        tokens[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

/// The size in bytes of the request's head (request line and header fields), or 0 when unknown.
static inline size_t chime_mhd_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

#endif
