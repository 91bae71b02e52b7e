#ifndef CHIME_CCURL_SHIM_H
#define CHIME_CCURL_SHIM_H
#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift does not import: one typed
/// wrapper per argument type Chime passes.
static inline CURLcode chime_curl_set_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode chime_curl_set_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode chime_curl_set_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode chime_curl_set_offset(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode chime_curl_set_headers(CURL *easy, struct curl_slist *headers) {
    return curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
}
static inline CURLcode chime_curl_set_write_function(CURL *easy, curl_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode chime_curl_set_header_function(CURL *easy, curl_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, callback);
}
static inline CURLcode chime_curl_get_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLMcode chime_curl_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLcode chime_curl_set_opensocket_function(CURL *easy, curl_opensocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, callback);
}
/// The IP address curl is about to connect to, in network order, into `out` (16 bytes): returns 4
/// for IPv4, 16 for IPv6, 0 for anything else.
static inline int chime_curl_sockaddr_ip(const struct curl_sockaddr *address, unsigned char *out) {
    if (address->family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)&address->addr)->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)&address->addr)->sin6_addr, 16);
        return 16;
    }
    return 0;
}
#endif
