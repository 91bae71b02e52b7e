#ifndef CHIME_CLIBSSL_SHIM_H
#define CHIME_CLIBSSL_SHIM_H
// OpenSSL 3's libssl: the server's TLS, with ALPN choosing HTTP/2 or HTTP/1.1 (RFC 7301).
#include <string.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/// The protocols the server offers, in its order of preference, as ALPN's wire format.
static const unsigned char chime_tls_alpn_protocols[] = { 2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };

/// ALPN: h2 when the client offers it, else http/1.1 when offered, else no ALPN (HTTP/1.1).
static int chime_tls_select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                                 unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, chime_tls_alpn_protocols, sizeof(chime_tls_alpn_protocols), in, inlen)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

/// A server context from PEM text: the certificate (then its chain, if any follows it) and the
/// private key, which must match. TLS 1.2 at least, no renegotiation, ALPN as above. NULL when the
/// PEM text is not a certificate and a matching key.
static inline SSL_CTX *chime_tls_server_context(const char *certificate_pem, const char *key_pem) {
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    if (context == NULL) return NULL;
    int ok = SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    BIO *certificates = BIO_new_mem_buf(certificate_pem, -1);
    X509 *leaf = certificates ? PEM_read_bio_X509(certificates, NULL, NULL, NULL) : NULL;
    ok = ok && leaf != NULL && SSL_CTX_use_certificate(context, leaf) == 1;
    if (leaf) X509_free(leaf);
    X509 *next;
    while (ok && certificates && (next = PEM_read_bio_X509(certificates, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(context, next) != 1) {
            X509_free(next);
            ok = 0;
        }
    }
    ERR_clear_error();  // the end of the chain reads as a PEM error
    if (certificates) BIO_free(certificates);
    BIO *keys = BIO_new_mem_buf(key_pem, -1);
    EVP_PKEY *key = keys ? PEM_read_bio_PrivateKey(keys, NULL, NULL, NULL) : NULL;
    ok = ok && key != NULL && SSL_CTX_use_PrivateKey(context, key) == 1 && SSL_CTX_check_private_key(context) == 1;
    if (key) EVP_PKEY_free(key);
    if (keys) BIO_free(keys);
    if (!ok) {
        ERR_clear_error();
        SSL_CTX_free(context);
        return NULL;
    }
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_alpn_select_cb(context, chime_tls_select_alpn, NULL);
    return context;
}

/// Whether the handshake chose h2.
static inline int chime_tls_selected_h2(const SSL *ssl) {
    const unsigned char *data = NULL;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl, &data, &length);
    return length == 2 && memcmp(data, "h2", 2) == 0;
}

/// Whether ALPN chose any protocol.
static inline int chime_tls_selected_any(const SSL *ssl) {
    const unsigned char *data = NULL;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl, &data, &length);
    return length > 0;
}
/// The SHA-256 of the first certificate's public key (its DER SubjectPublicKeyInfo) in PEM text:
/// what curl's CURLOPT_PINNEDPUBLICKEY takes as "sha256//<base64>". 1 when `out` holds it.
static inline int chime_tls_public_key_sha256(const char *certificate_pem, unsigned char out[32]) {
    BIO *bio = BIO_new_mem_buf(certificate_pem, -1);
    X509 *leaf = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    if (bio) BIO_free(bio);
    if (leaf == NULL) {
        ERR_clear_error();
        return 0;
    }
    unsigned char *der = NULL;
    int length = i2d_PUBKEY(X509_get0_pubkey(leaf), &der);
    X509_free(leaf);
    if (length <= 0) {
        ERR_clear_error();
        return 0;
    }
    unsigned int size = 0;
    int ok = EVP_Digest(der, (size_t)length, out, &size, EVP_sha256(), NULL) == 1 && size == 32;
    OPENSSL_free(der);
    return ok;
}
#endif
