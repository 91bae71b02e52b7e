#ifndef CHIME_CSYSTEMDBUS_SHIM_H
#define CHIME_CSYSTEMDBUS_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <systemd/sd-bus.h>

// sd-bus from libsystemd (Debian's libsystemd-dev). Swift cannot call sd-bus's variadic functions
// (sd_bus_message_append, sd_bus_call_method, ...): the desktop surface builds and reads messages
// with the fixed-argument ones, and these wrappers take the values that sd_bus_message_append_basic
// and sd_bus_message_read_basic pass by untyped pointer.

static inline int chime_sd_bus_append_string(sd_bus_message *m, const char *value) {
    return sd_bus_message_append_basic(m, 's', value);
}

static inline int chime_sd_bus_append_uint32(sd_bus_message *m, uint32_t value) {
    return sd_bus_message_append_basic(m, 'u', &value);
}

static inline int chime_sd_bus_append_int32(sd_bus_message *m, int32_t value) {
    return sd_bus_message_append_basic(m, 'i', &value);
}

static inline int chime_sd_bus_append_byte(sd_bus_message *m, uint8_t value) {
    return sd_bus_message_append_basic(m, 'y', &value);
}

/// D-Bus booleans are 32 bits wide in sd-bus (`int`).
static inline int chime_sd_bus_append_bool(sd_bus_message *m, int value) {
    return sd_bus_message_append_basic(m, 'b', &value);
}

/// Reads a string (`s`) or object path (`o`); `*value` points into the message.
static inline int chime_sd_bus_read_string(sd_bus_message *m, char type, const char **value) {
    return sd_bus_message_read_basic(m, type, value);
}

static inline int chime_sd_bus_read_uint32(sd_bus_message *m, uint32_t *value) {
    return sd_bus_message_read_basic(m, 'u', value);
}

static inline int chime_sd_bus_read_bool(sd_bus_message *m, int *value) {
    return sd_bus_message_read_basic(m, 'b', value);
}

/// An empty error, as SD_BUS_ERROR_NULL initialises one.
static inline sd_bus_error chime_sd_bus_error_null(void) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    return error;
}

#endif
