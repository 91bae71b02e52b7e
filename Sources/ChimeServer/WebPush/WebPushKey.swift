import ChimeCore
import ChimeCrypto
import Foundation

/// The service's VAPID key pair (RFC 8292): browsers subscribe with its public key
/// (`applicationServerKey`), and every push is signed with its private key, so a push service
/// accepts pushes for those subscriptions from this service alone.
///
/// Made at first start and kept in the data directory, `web-push-key.pem` (PKCS#8 PEM, mode 0600;
/// a file other users can read is refused). With a shared PostgreSQL database the database keeps it
/// too (`chime_kv`, key `webPush.vapidKey`, through the engine's
/// ``NotificationEngine/webPushKey(proposing:)``): the first node to start stores its key, and every
/// node uses the stored one (writing it to its own file), so a subscription made through one node is
/// served by all.
///
/// ```swift
/// let key = try await WebPushKey.loadOrCreate(dataDirectory: dir, sharedBy: nil)
/// print(Base64URL.encode(key.privateKey.publicKey.rawRepresentation))   // GET /v1/web-push/key
/// ```
public struct WebPushKey: Sendable {
    public let privateKey: P256PrivateKey

    /// The public key as browsers take it: the uncompressed point, base64url.
    public var publicKeyText: String { Base64URL.encode(privateKey.publicKey.rawRepresentation) }

    /// The key file in a data directory.
    public static func path(dataDirectory: String) -> String { dataDirectory + "/web-push-key.pem" }

    /// The data directory's key (made there when missing), or with an engine on a shared store the
    /// store's (the first node's).
    static func loadOrCreate(dataDirectory: String, sharedBy engine: NotificationEngine?) async throws -> WebPushKey {
        let path = path(dataDirectory: dataDirectory)
        let remedy = "delete it to make a new key (browsers subscribed with the old one must subscribe again)"
        let local = try RunningService.readSecretFile(
            path, holder: "whoever read it can sign pushes as this service", remedy: remedy)
        var pem = local
        if let engine {
            pem = try await engine.webPushKey(proposing: local ?? P256PrivateKey().pemRepresentation)
        }
        let key: P256PrivateKey
        do {
            key = try P256PrivateKey(pemRepresentation: pem ?? P256PrivateKey().pemRepresentation)
        } catch {
            let source =
                engine == nil ? path : "the database's web push key (chime_kv \(NotificationEngine.webPushKeyKey))"
            throw ServerError(
                .invalidConfiguration, "\(source) is not a P-256 private key in PEM: \(error.message); \(remedy)")
        }
        let text = key.pemRepresentation
        if local.map({ $0 != text.trimmingCharacters(in: .whitespacesAndNewlines) }) ?? true {
            // First start, or another node's key from the database: keep this node's copy current.
            let temporary = path + ".tmp"
            try RunningService.writeFile(
                temporary, contents: text.hasSuffix("\n") ? text : text + "\n", mode: 0o600, exclusive: false)
            guard rename(temporary, path) == 0 else {
                throw ServerError(.startFailed, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
        return WebPushKey(privateKey: key)
    }
}
