/*
 * protect.c - protect_document / unprotect_document of office-word-mcp-server
 * (tools/protection_tools.py, msoffcrypto-tool): ECMA-376 agile encryption
 * (MS-OFFCRYPTO 2.3.4.10-15) with OpenSSL - AES-256-CBC, SHA-512, 100000
 * spins, 4096-byte segments, HMAC data integrity - into a compound file
 * with EncryptionInfo, EncryptedPackage and the \x06DataSpaces storage
 * Office expects; and the reverse for any agile-encrypted package (AES
 * 128/192/256, SHA-1/256/384/512).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/word/cfb.h"
#include "servers/word/word.h"

#define MAX_PACKAGE (256u << 20)
#define SPIN 100000
#define SEGMENT 4096

static const unsigned char BLK_VERIFIER_INPUT[] = {0xfe, 0xa7, 0xd2, 0x76, 0x3b, 0x4b, 0x9e, 0x79};
static const unsigned char BLK_VERIFIER_VALUE[] = {0xd7, 0xaa, 0x0f, 0x6d, 0x30, 0x61, 0x34, 0x4e};
static const unsigned char BLK_KEY[] = {0x14, 0x6e, 0x0b, 0xe7, 0xab, 0xac, 0xd0, 0xd6};
static const unsigned char BLK_HMAC_KEY[] = {0x5f, 0xb2, 0xad, 0x01, 0x0c, 0xb9, 0xe1, 0xf6};
static const unsigned char BLK_HMAC_VALUE[] = {0xa0, 0x67, 0x7f, 0x02, 0xb2, 0x2c, 0x84, 0x33};

typedef struct params {
    const EVP_MD *md;
    const EVP_CIPHER *cipher;
    int key_bytes, block, hash_size, spin;
    unsigned char salt[64];
    int salt_len;
} params;

static int read_file(const char *path, mb_buf *out, char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return *why = mb_py_os_error(errno, path), -1;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        mb_buf_append(out, buf, (size_t)n);
        if (out->len > MAX_PACKAGE) {
            close(fd);
            *why = mb_strdup("file too large");
            return -1;
        }
    }
    close(fd);
    return n < 0 ? (*why = mb_py_os_error(errno, path), -1) : 0;
}

static int write_file(const char *path, const void *data, size_t len, char **why)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return *why = mb_py_os_error(errno, path), -1;
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n <= 0) {
            *why = mb_py_os_error(errno, path);
            close(fd);
            return -1;
        }
        p += n, len -= (size_t)n;
    }
    close(fd);
    return 0;
}

/* H(a || b) */
static void hash2(const EVP_MD *md, const void *a, size_t al, const void *b, size_t bl, unsigned char *out)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, md, NULL);
    EVP_DigestUpdate(c, a, al);
    EVP_DigestUpdate(c, b, bl);
    EVP_DigestFinal_ex(c, out, NULL);
    EVP_MD_CTX_free(c);
}

/* the password's iterated hash (2.3.4.11) */
static void password_hash(const params *p, const char *password, unsigned char *h)
{
    mb_buf u = {0};
    size_t len = strlen(password), i = 0;
    while (i < len) { /* UTF-16LE */
        unsigned cp = mb_utf8_next(password, len, &i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            unsigned hi = 0xD800 + (cp >> 10), lo = 0xDC00 + (cp & 0x3FF);
            unsigned char b[4] = {(unsigned char)hi, (unsigned char)(hi >> 8), (unsigned char)lo, (unsigned char)(lo >> 8)};
            mb_buf_append(&u, b, 4);
        } else {
            unsigned char b[2] = {(unsigned char)cp, (unsigned char)(cp >> 8)};
            mb_buf_append(&u, b, 2);
        }
    }
    hash2(p->md, p->salt, (size_t)p->salt_len, u.data ? u.data : "", u.len, h);
    mb_buf_free(&u);
    unsigned char tmp[64];
    for (int k = 0; k < p->spin; k++) {
        unsigned char it[4] = {(unsigned char)k, (unsigned char)(k >> 8), (unsigned char)(k >> 16), (unsigned char)(k >> 24)};
        hash2(p->md, it, 4, h, (size_t)p->hash_size, tmp);
        memcpy(h, tmp, (size_t)p->hash_size);
    }
}

/* derived key for a block key: H(h || blk), cut or padded with 0x36 */
static void derive(const params *p, const unsigned char *h, const unsigned char *blk, unsigned char *key)
{
    unsigned char d[64];
    hash2(p->md, h, (size_t)p->hash_size, blk, 8, d);
    for (int i = 0; i < p->key_bytes; i++) key[i] = i < p->hash_size ? d[i] : 0x36;
}

/* iv = H(salt || blk) cut/padded to the block size */
static void iv_for(const params *p, const unsigned char *blk, size_t blen, unsigned char *iv)
{
    unsigned char d[64];
    hash2(p->md, p->salt, (size_t)p->salt_len, blk, blen, d);
    for (int i = 0; i < p->block; i++) iv[i] = i < p->hash_size ? d[i] : 0x36;
}

static int aes(const params *p, int enc, const unsigned char *key, const unsigned char *iv, const unsigned char *in,
               size_t len, unsigned char *out)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int ok = EVP_CipherInit_ex(c, p->cipher, NULL, key, iv, enc) && EVP_CIPHER_CTX_set_padding(c, 0);
    int n1 = 0, n2 = 0;
    ok = ok && EVP_CipherUpdate(c, out, &n1, in, (int)len) && EVP_CipherFinal_ex(c, out + n1, &n2);
    EVP_CIPHER_CTX_free(c);
    return ok && (size_t)(n1 + n2) == len ? 0 : -1;
}

static size_t pad_to(size_t n, size_t b) { return (n + b - 1) / b * b; }

static char *b64(const unsigned char *d, size_t n)
{
    char *o = mb_malloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)o, d, (int)n);
    return o;
}

static int unb64(const char *s, unsigned char *out, size_t cap, size_t *n)
{
    size_t l = strlen(s);
    if (!l || l % 4 || l / 4 * 3 > cap + 2) return -1;
    unsigned char *tmp = mb_malloc(l / 4 * 3 + 1);
    int k = EVP_DecodeBlock(tmp, (const unsigned char *)s, (int)l);
    if (k < 0) {
        free(tmp);
        return -1;
    }
    size_t pad = (s[l - 1] == '=') + (l > 1 && s[l - 2] == '=');
    size_t m = (size_t)k - pad;
    if (m > cap) {
        free(tmp);
        return -1;
    }
    memcpy(out, tmp, m);
    free(tmp);
    *n = m;
    return 0;
}

/* encrypts/decrypts the package in 4096-byte segments (2.3.4.15) */
static int segments(const params *kd, int enc, const unsigned char *key, const unsigned char *in, size_t len,
                    unsigned char *out)
{
    for (size_t off = 0, i = 0; off < len; off += SEGMENT, i++) {
        unsigned char blk[4] = {(unsigned char)i, (unsigned char)(i >> 8), (unsigned char)(i >> 16), (unsigned char)(i >> 24)};
        unsigned char iv[64];
        iv_for(kd, blk, 4, iv);
        size_t n = len - off < SEGMENT ? len - off : SEGMENT;
        if (aes(kd, enc, key, iv, in + off, n, out + off)) return -1;
    }
    return 0;
}

/* ---------------------------------------------------------- \x06DataSpaces */

static void lp_p4(mb_buf *b, const char *ascii)
{
    size_t n = strlen(ascii);
    unsigned char len[4] = {(unsigned char)(2 * n), (unsigned char)((2 * n) >> 8), 0, 0};
    mb_buf_append(b, len, 4);
    for (size_t i = 0; i < n; i++) {
        mb_buf_putc(b, ascii[i]);
        mb_buf_putc(b, 0);
    }
    while (b->len % 4) mb_buf_putc(b, 0);
}

static void u32(mb_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    mb_buf_append(b, x, 4);
}

static void dataspaces(mb_buf *version, mb_buf *map, mb_buf *info, mb_buf *primary)
{
    lp_p4(version, "Microsoft.Container.DataSpaces");
    for (int i = 0; i < 3; i++) u32(version, 1); /* reader, updater, writer 1.0 (u16 pairs) */
    /* DataSpaceMap: one entry, EncryptedPackage -> StrongEncryptionDataSpace */
    mb_buf e = {0};
    u32(&e, 1); /* reference components */
    u32(&e, 0); /* stream */
    lp_p4(&e, "EncryptedPackage");
    lp_p4(&e, "StrongEncryptionDataSpace");
    u32(map, 8), u32(map, 1), u32(map, (uint32_t)(e.len + 4));
    mb_buf_append(map, e.data, e.len);
    mb_buf_free(&e);
    u32(info, 8), u32(info, 1);
    lp_p4(info, "StrongEncryptionTransform");
    mb_buf t = {0};
    u32(&t, 1); /* transform type */
    lp_p4(&t, "{FF9A3F03-56EF-4613-BDD5-5A41C1D07246}");
    u32(primary, (uint32_t)(t.len + 4));
    mb_buf_append(primary, t.data, t.len);
    mb_buf_free(&t);
    lp_p4(primary, "Microsoft.Container.EncryptionTransform");
    for (int i = 0; i < 3; i++) u32(primary, 1);
    u32(primary, 0); /* EncryptionTransformInfo: empty name */
    u32(primary, 0), u32(primary, 0), u32(primary, 4);
}

/* ---------------------------------------------------------------- encrypt */

static int encrypt_package(const char *password, const unsigned char *pkg, size_t len, mb_buf *out)
{
    params kd = {.md = EVP_sha512(), .cipher = EVP_aes_256_cbc(), .key_bytes = 32, .block = 16, .hash_size = 64,
                 .spin = SPIN, .salt_len = 16};
    params ek = kd;
    unsigned char secret[32], verifier[16], hmac_key[64], h[64], k1[32], k2[32], k3[32];
    if (RAND_bytes(kd.salt, 16) != 1 || RAND_bytes(ek.salt, 16) != 1 || RAND_bytes(secret, 32) != 1 ||
        RAND_bytes(verifier, 16) != 1 || RAND_bytes(hmac_key, 64) != 1)
        return -1;
    password_hash(&ek, password, h);
    derive(&ek, h, BLK_VERIFIER_INPUT, k1);
    derive(&ek, h, BLK_VERIFIER_VALUE, k2);
    derive(&ek, h, BLK_KEY, k3);
    unsigned char evi[16], vh[64], evh[64], ekv[32];
    aes(&ek, 1, k1, ek.salt, verifier, 16, evi);
    hash2(ek.md, verifier, 16, "", 0, vh);
    aes(&ek, 1, k2, ek.salt, vh, 64, evh);
    aes(&ek, 1, k3, ek.salt, secret, 32, ekv);
    /* EncryptedPackage: size, then the segments, each padded to the block size */
    size_t padded = 0;
    for (size_t off = 0; off < len; off += SEGMENT) padded += pad_to(len - off < SEGMENT ? len - off : SEGMENT, 16);
    unsigned char *plain = mb_calloc(padded ? padded : 1, 1), *enc = mb_calloc(8 + (padded ? padded : 1), 1);
    for (size_t off = 0, at = 0; off < len; off += SEGMENT) {
        size_t n = len - off < SEGMENT ? len - off : SEGMENT;
        memcpy(plain + at, pkg + off, n);
        at += pad_to(n, 16);
    }
    for (int i = 0; i < 8; i++) enc[i] = (unsigned char)((uint64_t)len >> (8 * i));
    int rc = segments(&kd, 1, secret, plain, padded, enc + 8);
    free(plain);
    /* data integrity */
    unsigned char iv1[64], iv2[64], ehk[64], hv[64], ehv[64];
    unsigned int hl = 0;
    iv_for(&kd, BLK_HMAC_KEY, 8, iv1);
    iv_for(&kd, BLK_HMAC_VALUE, 8, iv2);
    aes(&kd, 1, secret, iv1, hmac_key, 64, ehk);
    HMAC(EVP_sha512(), hmac_key, 64, enc, 8 + padded, hv, &hl);
    aes(&kd, 1, secret, iv2, hv, 64, ehv);
    char *s_kd = b64(kd.salt, 16), *s_ek = b64(ek.salt, 16), *s_evi = b64(evi, 16), *s_evh = b64(evh, 64),
         *s_ekv = b64(ekv, 32), *s_ehk = b64(ehk, 64), *s_ehv = b64(ehv, 64);
    mb_buf info = {0};
    u32(&info, 0x00040004); /* version 4.4 */
    u32(&info, 0x40);       /* flags: agile */
    mb_buf_printf(&info,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n"
                  "<encryption xmlns=\"http://schemas.microsoft.com/office/2006/encryption\" "
                  "xmlns:p=\"http://schemas.microsoft.com/office/2006/keyEncryptor/password\">"
                  "<keyData saltSize=\"16\" blockSize=\"16\" keyBits=\"256\" hashSize=\"64\" cipherAlgorithm=\"AES\" "
                  "cipherChaining=\"ChainingModeCBC\" hashAlgorithm=\"SHA512\" saltValue=\"%s\"/>"
                  "<dataIntegrity encryptedHmacKey=\"%s\" encryptedHmacValue=\"%s\"/>"
                  "<keyEncryptors><keyEncryptor uri=\"http://schemas.microsoft.com/office/2006/keyEncryptor/password\">"
                  "<p:encryptedKey spinCount=\"%d\" saltSize=\"16\" blockSize=\"16\" keyBits=\"256\" hashSize=\"64\" "
                  "cipherAlgorithm=\"AES\" cipherChaining=\"ChainingModeCBC\" hashAlgorithm=\"SHA512\" saltValue=\"%s\" "
                  "encryptedVerifierHashInput=\"%s\" encryptedVerifierHashValue=\"%s\" encryptedKeyValue=\"%s\"/>"
                  "</keyEncryptor></keyEncryptors></encryption>",
                  s_kd, s_ehk, s_ehv, SPIN, s_ek, s_evi, s_evh, s_ekv);
    free(s_kd), free(s_ek), free(s_evi), free(s_evh), free(s_ekv), free(s_ehk), free(s_ehv);
    mb_buf ver = {0}, map = {0}, dsi = {0}, prim = {0};
    dataspaces(&ver, &map, &dsi, &prim);
    wd_cfb_entry ents[] = {
        {"\x06" "DataSpaces", 1, NULL, 0},
        {"\x06" "DataSpaces/Version", 0, ver.data, ver.len},
        {"\x06" "DataSpaces/DataSpaceMap", 0, map.data, map.len},
        {"\x06" "DataSpaces/DataSpaceInfo", 1, NULL, 0},
        {"\x06" "DataSpaces/DataSpaceInfo/StrongEncryptionDataSpace", 0, dsi.data, dsi.len},
        {"\x06" "DataSpaces/TransformInfo", 1, NULL, 0},
        {"\x06" "DataSpaces/TransformInfo/StrongEncryptionTransform", 1, NULL, 0},
        {"\x06" "DataSpaces/TransformInfo/StrongEncryptionTransform/\x06Primary", 0, prim.data, prim.len},
        {"EncryptionInfo", 0, info.data, info.len},
        {"EncryptedPackage", 0, enc, 8 + padded},
    };
    if (!rc) rc = wd_cfb_write(ents, sizeof ents / sizeof ents[0], out);
    mb_buf_free(&ver), mb_buf_free(&map), mb_buf_free(&dsi), mb_buf_free(&prim), mb_buf_free(&info);
    free(enc);
    return rc;
}

/* ---------------------------------------------------------------- decrypt */

typedef enum { DEC_OK, DEC_BADKEY, DEC_FORMAT, DEC_ERROR } dec_rc;

static const char *xattr(xmlNodePtr n, const char *name)
{
    for (xmlAttrPtr a = n ? n->properties : NULL; a; a = a->next)
        if (!strcmp((const char *)a->name, name) && a->children) return (const char *)a->children->content;
    return NULL;
}

static xmlNodePtr find_el(xmlNodePtr n, const char *name)
{
    for (; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name)) return n;
        xmlNodePtr c = find_el(n->children, name);
        if (c) return c;
    }
    return NULL;
}

static int load_params(xmlNodePtr n, params *p)
{
    const char *alg = xattr(n, "hashAlgorithm"), *bits = xattr(n, "keyBits"), *salt = xattr(n, "saltValue");
    const char *spin = xattr(n, "spinCount"), *cipher = xattr(n, "cipherAlgorithm");
    if (!alg || !bits || !salt || (cipher && strcmp(cipher, "AES"))) return -1;
    p->md = !strcmp(alg, "SHA512") ? EVP_sha512() : !strcmp(alg, "SHA384") ? EVP_sha384()
            : !strcmp(alg, "SHA256") ? EVP_sha256() : !strcmp(alg, "SHA1") ? EVP_sha1() : NULL;
    int kb = atoi(bits);
    p->cipher = kb == 128 ? EVP_aes_128_cbc() : kb == 192 ? EVP_aes_192_cbc() : kb == 256 ? EVP_aes_256_cbc() : NULL;
    if (!p->md || !p->cipher) return -1;
    p->key_bytes = kb / 8;
    p->block = 16;
    p->hash_size = EVP_MD_get_size(p->md);
    p->spin = spin ? atoi(spin) : 0;
    if (p->spin < 0 || p->spin > 10000000) return -1;
    size_t sl;
    if (unb64(salt, p->salt, sizeof p->salt, &sl) || !sl) return -1;
    p->salt_len = (int)sl;
    return 0;
}

static dec_rc decrypt_package(const char *password, const unsigned char *file, size_t len, mb_buf *out, char **why)
{
    mb_buf info = {0}, pkg = {0};
    dec_rc rc = DEC_FORMAT;
    xmlDocPtr x = NULL;
    if (!wd_cfb_is(file, len) || wd_cfb_read(file, len, "EncryptionInfo", &info, why) ||
        wd_cfb_read(file, len, "EncryptedPackage", &pkg, why))
        goto done;
    const unsigned char *ib = (const unsigned char *)info.data;
    if (info.len < 8 || ib[0] != 4 || ib[2] != 4) {
        free(*why);
        *why = mb_strdup("only ECMA-376 agile encryption is supported");
        rc = DEC_ERROR;
        goto done;
    }
    mb_err err = {0};
    if (mb_ooxml_parse(info.data + 8, info.len - 8, "EncryptionInfo", &x, &err)) {
        *why = mb_strdup(err.msg);
        rc = DEC_ERROR;
        goto done;
    }
    xmlNodePtr root = xmlDocGetRootElement(x);
    xmlNodePtr kdn = find_el(root, "keyData"), ekn = find_el(root, "encryptedKey");
    params kd = {0}, ek = {0};
    if (!kdn || !ekn || load_params(kdn, &kd) || load_params(ekn, &ek)) {
        *why = mb_strdup("unsupported EncryptionInfo");
        rc = DEC_ERROR;
        goto done;
    }
    unsigned char h[64], k1[64], k2[64], k3[64], evi[64], evh[128], ekv[64], vi[64], vh[128], calc[64], key[64];
    size_t nevi, nevh, nekv;
    if (unb64(xattr(ekn, "encryptedVerifierHashInput") ? xattr(ekn, "encryptedVerifierHashInput") : "", evi, sizeof evi, &nevi) ||
        unb64(xattr(ekn, "encryptedVerifierHashValue") ? xattr(ekn, "encryptedVerifierHashValue") : "", evh, sizeof evh, &nevh) ||
        unb64(xattr(ekn, "encryptedKeyValue") ? xattr(ekn, "encryptedKeyValue") : "", ekv, sizeof ekv, &nekv) ||
        nevi % 16 || nevh % 16 || nekv % 16 || (size_t)ek.key_bytes > nekv || (size_t)ek.hash_size > nevh) {
        *why = mb_strdup("unsupported EncryptionInfo");
        rc = DEC_ERROR;
        goto done;
    }
    password_hash(&ek, password, h);
    derive(&ek, h, BLK_VERIFIER_INPUT, k1);
    derive(&ek, h, BLK_VERIFIER_VALUE, k2);
    derive(&ek, h, BLK_KEY, k3);
    unsigned char iv[64];
    memset(iv, 0, sizeof iv);
    memcpy(iv, ek.salt, (size_t)(ek.salt_len < 16 ? ek.salt_len : 16));
    aes(&ek, 0, k1, iv, evi, nevi, vi);
    aes(&ek, 0, k2, iv, evh, nevh, vh);
    hash2(ek.md, vi, (size_t)(ek.salt_len < (int)nevi ? ek.salt_len : (int)nevi), "", 0, calc);
    if (memcmp(calc, vh, (size_t)ek.hash_size)) {
        rc = DEC_BADKEY;
        goto done;
    }
    aes(&ek, 0, k3, iv, ekv, nekv, key);
    const unsigned char *pb = (const unsigned char *)pkg.data;
    if (pkg.len < 8) goto bad;
    uint64_t size = 0;
    for (int i = 0; i < 8; i++) size |= (uint64_t)pb[i] << (8 * i);
    size_t body = pkg.len - 8;
    if (size > body || body % 16) body -= body % 16;
    if (size > body) goto bad;
    unsigned char *plain = mb_malloc(body ? body : 1);
    if (segments(&kd, 0, key, pb + 8, body, plain)) {
        free(plain);
        goto bad;
    }
    mb_buf_append(out, plain, size);
    free(plain);
    rc = DEC_OK;
    goto done;
bad:
    *why = mb_strdup("corrupt EncryptedPackage");
    rc = DEC_ERROR;
done:
    if (x) xmlFreeDoc(x);
    mb_buf_free(&info);
    mb_buf_free(&pkg);
    return rc;
}

/* ------------------------------------------------------------------ tools */

int wd_t_protect_document(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    const char *password = json_string_value(json_object_get(a, "password"));
    struct stat st;
    char *msg = NULL, *why = NULL;
    mb_buf in = {0}, out = {0};
    if (stat(f, &st)) mb_mcp_textf(res, "Document %s does not exist", f);
    else if (!wd_writeable(f, &msg)) mb_mcp_textf(res, "Cannot protect document: %s", msg);
    else if (read_file(f, &in, &why)) mb_mcp_textf(res, "Failed to encrypt document %s: %s. Could not restore original file.", f, why);
    else if (wd_cfb_is(in.data, in.len))
        mb_mcp_textf(res, "Failed to encrypt document %s: File is already encrypted. Original file restored.", f);
    else if (in.len < 4 || memcmp(in.data, "PK", 2))
        mb_mcp_textf(res, "Failed to encrypt document %s: Unsupported file format. Original file restored.", f);
    else if (encrypt_package(password, (const unsigned char *)in.data, in.len, &out))
        mb_mcp_textf(res, "Failed to encrypt document %s: encryption failed. Original file restored.", f);
    else if (write_file(f, out.data, out.len, &why)) {
        write_file(f, in.data, in.len, &msg);
        mb_mcp_textf(res, "Failed to encrypt document %s: %s. Original file restored.", f, why);
    } else {
        /* upstream drops a stale "<base>.protection" metadata file */
        const char *slash = strrchr(f, '/');
        const char *dot = strrchr(slash ? slash + 1 : f, '.');
        char *meta = mb_asprintf("%.*s.protection", (int)(dot ? (size_t)(dot - f) : strlen(f)), f);
        unlink(meta);
        free(meta);
        mb_mcp_textf(res, "Document %s encrypted successfully with password.", f);
    }
    mb_buf_free(&in);
    mb_buf_free(&out);
    free(msg);
    free(why);
    free(f);
    return 0;
}

int wd_t_unprotect_document(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    char *f = wd_docx_name(json_string_value(json_object_get(a, "filename")));
    const char *password = json_string_value(json_object_get(a, "password"));
    struct stat st;
    char *msg = NULL, *why = NULL;
    mb_buf in = {0}, out = {0};
    if (stat(f, &st)) {
        mb_mcp_textf(res, "Document %s does not exist", f);
    } else if (!wd_writeable(f, &msg)) {
        mb_mcp_textf(res, "Cannot modify document: %s", msg);
    } else if (read_file(f, &in, &why)) {
        mb_mcp_textf(res, "Failed to decrypt document %s: %s. Could not restore encrypted file.", f, why);
    } else if (!wd_cfb_is(in.data, in.len)) {
        mb_mcp_textf(res, "Failed to decrypt document %s: File is not encrypted or is not a supported Office format.", f);
    } else {
        dec_rc rc = decrypt_package(password, (const unsigned char *)in.data, in.len, &out, &why);
        if (rc == DEC_BADKEY) mb_mcp_textf(res, "Failed to decrypt document %s: Incorrect password.", f);
        else if (rc == DEC_FORMAT)
            mb_mcp_textf(res, "Failed to decrypt document %s: File is not encrypted or is not a supported Office format.", f);
        else if (rc == DEC_ERROR) mb_mcp_textf(res, "Failed to decrypt document %s: %s. Encrypted file restored.", f, why);
        else if (write_file(f, out.data, out.len, &why)) {
            write_file(f, in.data, in.len, &msg);
            mb_mcp_textf(res, "Failed to decrypt document %s: %s. Encrypted file restored.", f, why);
        } else {
            mb_mcp_textf(res, "Document %s decrypted successfully.", f);
        }
    }
    mb_buf_free(&in);
    mb_buf_free(&out);
    free(msg);
    free(why);
    free(f);
    return 0;
}
