import ChimeCore
import ChimeCrypto
import Foundation
import Synchronization

/// Sign-in for the web notification center: one-time login codes, session cookies and CSRF
/// tokens.
///
/// The flow:
/// 1. `chime open` (holding the owner token) asks `POST /v1/session/links` for a one-time code and
///    prints `http://127.0.0.1:7878/#login=CODE`. The code sits in the URL's fragment, which a
///    browser never sends, so it never reaches a server log or a `Referer` header.
/// 2. The page posts the code to `POST /v1/session`; the answer sets the session cookie
///    (`HttpOnly; SameSite=Strict`) and carries the session's CSRF token.
/// 3. Every state change made with the cookie must carry `X-CSRF-Token` with that token, and, when
///    the browser sends one, an `Origin` of the server itself.
///
/// Codes last two minutes and work once; they live in memory, or with a shared database in the store
/// (so a code made through one node signs in through another). Sessions are stored (hashed) in the
/// store, so a signed-in browser stays signed in across a restart of the service; a node caches
/// them only when no other node can end them (with a shared database each request reads the store,
/// so a sign-out on one node holds on every node at once).
final class WebSessions: Sendable {
    /// The cookie's name.
    static let cookieName = "chime_session"
    /// How long a login code is valid.
    static let codeLifetime: TimeInterval = 120
    /// How long a session lasts without signing in again.
    static let sessionLifetime: TimeInterval = 30 * 24 * 3600
    /// The lifetime given to new sessions (``sessionLifetime``; tests shorten it).
    let lifetime = Mutex<TimeInterval>(WebSessions.sessionLifetime)

    private let engine: NotificationEngine
    /// Outstanding login codes: SHA-256 of the code → expiry.
    private let codes = Mutex<[String: Date]>([:])
    /// Sessions seen since start: SHA-256 of the cookie → expiry (the store has them all).
    private let cache = Mutex<[String: Date]>([:])

    /// Whether other nodes share the store: then codes are stored and sessions not cached.
    private let shared: Bool

    init(engine: NotificationEngine) {
        self.engine = engine
        shared = engine.isStoreShared
    }

    private var now: Date { engine.clock.now }

    // MARK: Codes

    /// A new one-time login code, kept in this node's memory (what a desktop prompt on this machine
    /// opens).
    func makeCode() -> (code: String, expires: Date) {
        let code = Tokens.make()
        let expires = now.addingTimeInterval(Self.codeLifetime)
        let now = self.now
        codes.withLock { codes in
            codes = codes.filter { $0.value > now }
            codes[Tokens.hash(code)] = expires
        }
        return (code, expires)
    }

    /// A new one-time login code for a sign-in link: with a shared database kept in the store, so a
    /// load balancer may send the browser to any node; otherwise as ``makeCode()``.
    func makeLinkCode() async throws -> (code: String, expires: Date) {
        guard shared else { return makeCode() }
        let code = Tokens.make()
        let expires = now.addingTimeInterval(Self.codeLifetime)
        let key = Self.codeKey(Tokens.hash(code))
        let value = String(expires.timeIntervalSince1970)
        try await engine.setStoredValue(value, forKey: key)
        return (code, expires)
    }

    /// Consumes a login code made here: true once, for a code made less than two minutes ago.
    func redeem(_ code: String) -> Bool {
        let hash = Tokens.hash(code)
        let now = self.now
        return codes.withLock { codes in
            guard let expires = codes.removeValue(forKey: hash) else { return false }
            return expires > now
        }
    }

    /// Consumes a sign-in link's code: one made here (``redeem(_:)``), or with a shared database one
    /// made by any node; true once.
    func redeemLinkCode(_ code: String) async throws -> Bool {
        if redeem(code) { return true }
        guard shared else { return false }
        let key = Self.codeKey(Tokens.hash(code))
        guard let stored = try await engine.takeStoredValue(forKey: key),
            let seconds = Double(stored)
        else { return false }
        return Date(timeIntervalSince1970: seconds) > now
    }

    private static func codeKey(_ hash: String) -> String { "web.code.\(hash)" }

    // MARK: Sessions

    /// Starts a session; returns the cookie's secret value.
    func startSession() async throws -> (secret: String, expires: Date) {
        let secret = Tokens.make()
        let expires = now.addingTimeInterval(lifetime.withLock { $0 })
        let key = Self.storeKey(Tokens.hash(secret))
        let value = String(Int64(expires.timeIntervalSince1970))
        try await engine.setStoredValue(value, forKey: key)
        if !shared { cache.withLock { $0[Tokens.hash(secret)] = expires } }
        return (secret, expires)
    }

    /// The session's expiry, if `secret` is a live session.
    func validate(_ secret: String) async throws -> Date? {
        guard !secret.isEmpty else { return nil }
        let hash = Tokens.hash(secret)
        let now = self.now
        if let expires = cache.withLock({ $0[hash] }) {
            return expires > now ? expires : nil
        }
        let key = Self.storeKey(hash)
        guard let stored = try await engine.storedValue(forKey: key),
            let seconds = Int64(stored)
        else { return nil }
        let expires = Date(timeIntervalSince1970: TimeInterval(seconds))
        if !shared { cache.withLock { $0[hash] = expires } }
        if expires <= now {
            // An expired session is of no use to anyone: forget it.
            try await engine.setStoredValue(nil, forKey: key)
            return nil
        }
        return expires
    }

    /// Ends a session (signing out).
    func endSession(_ secret: String) async throws {
        let hash = Tokens.hash(secret)
        let key = Self.storeKey(hash)
        try await engine.setStoredValue(nil, forKey: key)
        cache.withLock { $0[hash] = Date.distantPast }
    }

    /// The session's CSRF token: derived from the session's secret, so it needs no storage and
    /// cannot be guessed without the cookie.
    static func csrfToken(forSession secret: String) -> String {
        Digest.sha256Hex(Array("chime-csrf:\(secret)".utf8))
    }

    private static func storeKey(_ hash: String) -> String { "web.session.\(hash)" }

    // MARK: Cookies

    /// The session cookie's value in a request's `Cookie` header.
    static func sessionCookie(in request: HTTPRequest) -> String? {
        guard let header = request.header("cookie") else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else { continue }
            return parts[1].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// `Set-Cookie` for a new session (or, with `nil`, one that clears it).
    static func setCookie(_ secret: String?, secure: Bool) -> String {
        var parts = ["\(cookieName)=\(secret ?? "")", "Path=/", "HttpOnly", "SameSite=Strict"]
        parts.append(secret == nil ? "Max-Age=0" : "Max-Age=\(Int(sessionLifetime))")
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }
}
