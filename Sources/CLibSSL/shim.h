#ifndef CHIME_CLIBSSL_SHIM_H
#define CHIME_CLIBSSL_SHIM_H
// OpenSSL 3's libssl: the server's TLS, with ALPN choosing HTTP/2 or HTTP/1.1 (RFC 7301).
#include <stdint.h>
#include <string.h>
#include <time.h>
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

/// Accepts whatever client certificate the handshake brings: the service checks it against the
/// certificates registered for apps (by pin, so a self-signed provider certificate works), not
/// against a chain. libssl still checks that the client holds the certificate's key.
static int chime_tls_accept_any_client_certificate(int preverified, X509_STORE_CTX *store) {
    (void)preverified;
    (void)store;
    return 1;
}

/// Asks this connection's client for a certificate, without requiring one.
static inline void chime_tls_request_client_certificate(SSL *ssl) {
    SSL_set_verify(ssl, SSL_VERIFY_PEER, chime_tls_accept_any_client_certificate);
}

/// A certificate's pins and validity: the SHA-256 of its DER encoding and of its public key (DER
/// SubjectPublicKeyInfo), and notBefore/notAfter as seconds since 1970. 1 when all were read.
static inline int chime_tls_x509_facts(X509 *certificate, unsigned char certificate_sha256[32], unsigned char key_sha256[32],
                                       int64_t *not_before, int64_t *not_after) {
    unsigned int size = 0;
    if (X509_digest(certificate, EVP_sha256(), certificate_sha256, &size) != 1 || size != 32) return 0;
    unsigned char *der = NULL;
    int length = i2d_PUBKEY(X509_get0_pubkey(certificate), &der);
    if (length <= 0) return 0;
    int ok = EVP_Digest(der, (size_t)length, key_sha256, &size, EVP_sha256(), NULL) == 1 && size == 32;
    OPENSSL_free(der);
    struct tm before, after;
    ok = ok && ASN1_TIME_to_tm(X509_get0_notBefore(certificate), &before) == 1 && ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &after) == 1;
    if (ok) {
        *not_before = (int64_t)timegm(&before);
        *not_after = (int64_t)timegm(&after);
    }
    return ok;
}

/// The facts of the certificate the client presented on `ssl` (see chime_tls_x509_facts); 0 when
/// it presented none.
static inline int chime_tls_peer_certificate(const SSL *ssl, unsigned char certificate_sha256[32], unsigned char key_sha256[32],
                                             int64_t *not_before, int64_t *not_after) {
    X509 *peer = SSL_get0_peer_certificate(ssl);
    if (peer == NULL) return 0;
    int ok = chime_tls_x509_facts(peer, certificate_sha256, key_sha256, not_before, not_after);
    ERR_clear_error();
    return ok;
}

/// The facts of the first certificate in PEM text (see chime_tls_x509_facts); 0 when there is none.
static inline int chime_tls_pem_certificate(const char *certificate_pem, unsigned char certificate_sha256[32], unsigned char key_sha256[32],
                                            int64_t *not_before, int64_t *not_after) {
    BIO *bio = BIO_new_mem_buf(certificate_pem, -1);
    X509 *leaf = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    if (bio) BIO_free(bio);
    int ok = leaf != NULL && chime_tls_x509_facts(leaf, certificate_sha256, key_sha256, not_before, not_after);
    if (leaf) X509_free(leaf);
    ERR_clear_error();
    return ok;
}
#endif
