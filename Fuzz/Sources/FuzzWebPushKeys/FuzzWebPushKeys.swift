import ChimeCore
import ChimeCrypto
import Foundation
import FuzzSupport

// Fuzz target: a subscriber's keys given to Chime's RFC 8291 encryptor through OpenSSL
// (WebPushEncryption.encrypt(_:p256dh:auth:padding:recordSize:), as the Web Push sender calls it).
// The input's first byte picks the p256dh: the input's 65 bytes as they are, 04 and 64 of them, or
// one of three real subscribers' keys (their private keys are below) with a byte changed or not;
// then the auth secret (16 bytes or another length), the padding, the record size and the
// plaintext. Checks:
// - a p256dh that is not a point on P-256 by a model of the curve written apart (P256Model: the
//   form, x and y below p, y² = x³ − 3x + b) is refused with invalidValue naming keys.p256dh and
//   saying so, and every point the model accepts is accepted (never a crash, an OpenSSL abort or
//   another error);
// - then a record size or padding out of range is refused, a plaintext that does not fit one record
//   (RFC 8291 §4: the record size greater than the plaintext, the delimiter, the padding and the tag)
//   is tooLarge, and an auth secret that is not 16 bytes is refused naming keys.auth;
// - what is accepted is one aes128gcm record (RFC 8188 §2.1): a 16-byte salt, the record size
//   given, a 65-byte key id that is the sender's point (not the subscriber's), and a
//   record of exactly the plaintext, delimiter, padding and tag, smaller than the record size; the
//   subscriber's private key and auth secret decrypt it to the plaintext, another auth secret not.

/// Three subscribers (made with `openssl ecparam -name prime256v1 -genkey | openssl pkcs8 -topk8 -nocrypt`).
let subscribers: [P256PrivateKey] = [
    """
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgEXtpl8xhn2xB/Sv6
    V1H9cczkkOiIGcwy9Rg6XTjA5FOhRANCAARcc2C0mh85X379buusdmHYPwjEUbok
    Q2CTA7gdCuQasE/KL9KuOkWJ1I3O6yfmh4efpJVqqUAIefDYYrzh0DRb
    """,
    """
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgfBAGGNhL6Ke2+XWz
    g37Rv8GLncG3OJlMw3jLWOKDImqhRANCAARxTk9xRVd1ZOj4srADpJLVGHefDu02
    JA0zx0sEqYe5W/2iC8tUba+E8zz/y96+wzCN4Ws8OwebxYfwTu0DhgDY
    """,
    """
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgA++dGRbqY5+f7qZ1
    5MrB/uetArNliyVQrRcRzIIuviShRANCAAQz6yE6/F0px2k6z6JElDmqM8W7zLL6
    VHLFUk0ekCL38cFaaEt0GydOi4jlTIAlxDfhFOM2mXOb5+jvCP1hP2Rp
    """,
].map { body in
    do {
        return try P256PrivateKey(
            pemRepresentation: "-----BEGIN PRIVATE KEY-----\n\(body)\n-----END PRIVATE KEY-----\n")
    } catch {
        fatalError("a subscriber's key does not read: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebPushKeys(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var bytes = fuzzBytes(start, count)[...]
    func take(_ count: Int) -> [UInt8] {
        defer { bytes = bytes.dropFirst(count) }
        return Array(bytes.prefix(count)) + Array(repeating: 0, count: max(0, count - bytes.count))
    }
    let mode = take(1)[0]
    var subscriber: P256PrivateKey?
    var p256dh: [UInt8]
    switch mode % 4 {
    case 0: p256dh = take(Int(mode >> 2) % 3 == 0 ? 65 : Int(mode >> 2) % 70)
    case 1: p256dh = [4] + take(64)
    default:
        let chosen = subscribers[Int(mode >> 2) % subscribers.count]
        p256dh = chosen.publicKey.rawRepresentation
        let change = take(2)
        if mode % 4 == 2, change[0] != 0 {
            p256dh[Int(change[0]) % 65] ^= change[1] == 0 ? 1 : change[1]
        }
        subscriber = p256dh == chosen.publicKey.rawRepresentation ? chosen : nil
    }
    let shape = take(4)
    let auth = take(shape[0] & 0x80 == 0 ? 16 : Int(shape[0]) % 33)
    let padding = shape[1] & 0x80 == 0 ? Int(shape[1]) : -Int(shape[1] & 0x7F)
    let recordSize = shape[2] & 0x80 == 0 ? 4096 : Int(shape[3]) << 4 | Int(shape[2] & 0x7F)
    let plaintext = Array(bytes)

    let onCurve = P256Model.isPoint(p256dh)
    let fits = plaintext.count + 1 + padding + 16 < recordSize
    let body: [UInt8]
    do {
        body = try WebPushEncryption.encrypt(
            plaintext, p256dh: p256dh, auth: auth, padding: padding, recordSize: recordSize)
    } catch {
        if !onCurve {
            require(
                error.code == .invalidValue && error.field == "keys.p256dh" && error.message.hasPrefix("keys.p256dh: "),
                "a p256dh off the curve refused as \(error.code) \(String(describing: error.field)): \(error.message)")
            return 0
        }
        require(error.field != "keys.p256dh", "a point on the curve refused: \(error.message) for \(p256dh)")
        if padding < 0 || !(18...Int(UInt32.max)).contains(recordSize) {
            require(
                error.code == .invalidValue && error.field == nil,
                "record size \(recordSize), padding \(padding): \(error)")
        } else if !fits {
            require(
                error.code == .tooLarge,
                "\(plaintext.count) bytes, padding \(padding), record size \(recordSize): \(error)")
        } else {
            require(
                auth.count != 16 && error.code == .invalidValue && error.field == "keys.auth"
                    && error.message.hasPrefix("keys.auth: "),
                "auth of \(auth.count) bytes refused as \(error.code) \(String(describing: error.field)): \(error.message)"
            )
        }
        return 0
    }
    require(onCurve, "a p256dh off the curve accepted: \(p256dh)")
    require(
        auth.count == 16 && padding >= 0 && fits,
        "accepted auth \(auth.count), padding \(padding), record size \(recordSize)")

    // One aes128gcm record, as RFC 8188 §2.1 lays it out.
    require(
        body.count == 86 + plaintext.count + 1 + padding + 16,
        "a body of \(body.count) bytes for \(plaintext.count) + \(padding)")
    require(body[16..<20].reduce(0) { $0 << 8 | Int($1) } == recordSize, "record size in the header")
    require(body[20] == 65, "key id length \(body[20])")
    let sender = Array(body[21..<86])
    require(
        sender.first == 4 && sender != p256dh && (try? P256PublicKey(rawRepresentation: sender)) != nil,
        "the key id is not a sender's point on the curve")
    require(body.count - 86 < recordSize, "a record of \(body.count - 86) bytes in a record size of \(recordSize)")

    guard let subscriber else { return 0 }
    do {
        let read = try WebPushEncryption.decrypt(body, userAgentPrivateKey: subscriber, authSecret: auth)
        require(read == plaintext, "decrypted \(read.count) bytes, not the \(plaintext.count) encrypted")
    } catch {
        fatalError("the subscriber cannot decrypt: \(error)")
    }
    var otherAuth = auth
    otherAuth[Int(shape[3]) % 16] ^= 0x01
    do {
        _ = try WebPushEncryption.decrypt(body, userAgentPrivateKey: subscriber, authSecret: otherAuth)
        fatalError("decrypted with another auth secret")
    } catch {
        require(error.code == .notPermitted, "another auth secret: \(error)")
    }
    return 0
}
