#ifndef CHIME_CLIBCRYPTO_SHIM_H
#define CHIME_CLIBCRYPTO_SHIM_H
// OpenSSL 3's libcrypto, through its EVP interface only (ChimeCrypto wraps it).
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

/// The selections for EVP_PKEY_fromdata are macros of macros, which Swift does not import.
static inline int chime_crypto_select_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int chime_crypto_select_key_pair(void) { return EVP_PKEY_KEYPAIR; }

/// BIO_get_mem_data is a macro over BIO_ctrl: the bytes written into a memory BIO so far.
static inline long chime_crypto_bio_contents(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

/// The AEAD tag controls, spelled as functions (the macros alias other macros).
static inline int chime_crypto_gcm_get_tag(EVP_CIPHER_CTX *ctx, int length, void *tag) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, length, tag);
}
static inline int chime_crypto_gcm_set_tag(EVP_CIPHER_CTX *ctx, int length, void *tag) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, length, tag);
}
#endif
