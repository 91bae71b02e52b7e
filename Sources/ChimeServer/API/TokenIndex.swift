import ChimeCore
import Synchronization

/// Every app's token hash, both ways, so a presented token is checked with one dictionary lookup
/// whatever the number of apps, and without a trip through the engine's writer: an unknown token
/// costs the same as a known one. With them, what the APNs endpoint would otherwise look for in
/// every app record: the provider certificates registered for apps (``AppRecord/apnsCertificate``),
/// so a push authorized by a TLS client certificate reads no app record to find the apps it may push
/// to; the team keys by key id (``AppRecord/apnsProvider``), so a provider token whose key is
/// registered on another app of its team reads only the topic's record; and the device tokens, so a
/// push to another app's device token is told `DeviceTokenNotForTopic` without reading them all.
///
/// The index is a copy of what the store says, kept current on the writer only, in commit order:
/// it is loaded from the store in one writer operation, a token written by ``ChimeAPI`` is set in
/// the operation that writes it, an app the engine announces as removed is dropped as the
/// announcement is published (before the removal's caller hears it is done), and an app announced
/// as changed (by this node or, through the store's change feed, another) is read again. A lookup
/// takes the SHA-256 of a token, never the token: comparing hashes in a dictionary leaks nothing an
/// attacker can use.
///
/// On a shared database the feed brings another node's new token a moment after its commit, so a
/// hash the index does not know may still be in the store: ``ChimeAPI`` then reads the app's record
/// (``mayRead(app:at:)`` says when it may). Those reads are held to ``ReadLimits``: after the store
/// confirmed a miss for an app, its next misses are refused without a read for a while (until the
/// app changes, at most ``ReadLimits/missHold``), and all apps together get at most
/// ``ReadLimits/perSecond`` reads, so wrong tokens cannot keep the database busy.
///
/// ```swift
/// let index = TokenIndex()
/// index.load([record])                       // on the writer
/// index.app(forHash: Tokens.hash(token))     // "com.example.alarm"
/// index.apps(certifiedBy: presented)         // ["com.example.alarm"] when its certificate
/// index.providers(keyID: "ABCDE12345")        // the team and key registered under that id
/// index.app(forDeviceToken: token)            // "com.example.alarm"
/// index.mayRead(app: "com.example.alarm")    // true: the store may be asked once
/// ```
final class TokenIndex: Sendable {
    /// How often a token the index does not know may be looked up in the store.
    struct ReadLimits: Sendable {
        /// How long a miss the store confirmed for an app stands (unless the app changes first).
        var missHold: Duration = .seconds(1)
        /// Reads a second for all apps together, and as many at once.
        var perSecond: Double = 50
    }

    private struct State {
        var loaded = false
        var appByHash: [String: String] = [:]
        var hashByApp: [String: String] = [:]
        var certificateByApp: [String: CertificateFingerprint] = [:]
        /// Apps with a team key of their own, and the apps by key id.
        var providerByApp: [String: APNsProvider] = [:]
        var appsByKeyID: [String: Set<String>] = [:]
        var appByDeviceToken: [String: String] = [:]
        var deviceTokenByApp: [String: String] = [:]
        /// When the store last confirmed a miss for an app.
        var misses: [LiteralKey: ContinuousClock.Instant] = [:]
        /// Reads left now, and when that was counted.
        var budget: Double
        var counted: ContinuousClock.Instant?
    }

    private let state: Mutex<State>
    let limits: ReadLimits

    init(limits: ReadLimits = ReadLimits()) {
        self.limits = limits
        state = Mutex(State(budget: limits.perSecond))
    }

    /// Whether the store's apps were read.
    var isLoaded: Bool { state.withLock { $0.loaded } }

    /// The app whose token hashes to `hash`.
    func app(forHash hash: String) -> String? {
        state.withLock { $0.appByHash[hash] }
    }

    /// Replaces the index with the store's apps.
    func load(_ records: [AppRecord]) {
        state.withLock { state in
            // Everything anew but the reads' budget.
            state = State(budget: state.budget, counted: state.counted)
            state.loaded = true
            for record in records { Self.update(&state, app: record.bundleIdentifier, record: record) }
        }
    }

    /// Takes the app's record as the store now has it (nil: the app is gone).
    func update(app: String, record: AppRecord?) {
        state.withLock { Self.update(&$0, app: app, record: record) }
    }

    private static func update(_ state: inout State, app: String, record: AppRecord?) {
        set(&state, app: app, hash: record?.tokenHash)
        state.certificateByApp[app] = record?.apnsCertificate
        if let old = state.providerByApp.removeValue(forKey: app)?.key?.id {
            state.appsByKeyID[old]?.remove(app)
            if state.appsByKeyID[old]?.isEmpty == true { state.appsByKeyID[old] = nil }
        }
        if let provider = record?.apnsProvider, let key = provider.key {
            state.providerByApp[app] = provider
            state.appsByKeyID[key.id, default: []].insert(app)
        }
        if let old = state.deviceTokenByApp.removeValue(forKey: app), state.appByDeviceToken[old] == app {
            state.appByDeviceToken[old] = nil
        }
        if let token = record?.deviceToken.lowercased() {
            state.deviceTokenByApp[app] = token
            state.appByDeviceToken[token] = app
        }
    }

    /// The team keys registered under key id `keyID`, with their teams, in bundle identifier order
    /// of the apps that hold them.
    func providers(keyID: String) -> [APNsProvider] {
        state.withLock { state in
            (state.appsByKeyID[keyID] ?? []).sorted().compactMap { state.providerByApp[$0] }
        }
    }

    /// The app whose device token is `token` (64 lowercase hexadecimal digits).
    func app(forDeviceToken token: String) -> String? {
        state.withLock { $0.appByDeviceToken[token] }
    }

    /// The apps whose registered certificate `presented` matches (the same certificate, or its
    /// key), in bundle identifier order. Only apps with a certificate are looked at.
    func apps(certifiedBy presented: CertificateFingerprint) -> [String] {
        state.withLock { state in state.certificateByApp.filter { $0.value.matches(presented) }.map(\.key).sorted() }
    }

    /// Whether some app has a certificate registered.
    var hasCertificates: Bool { state.withLock { !$0.certificateByApp.isEmpty } }

    /// Records the app's token hash (nil: the app has no token, or is gone).
    func set(app: String, hash: String?) {
        state.withLock { Self.set(&$0, app: app, hash: hash) }
    }

    private static func set(_ state: inout State, app: String, hash: String?) {
        state.misses[LiteralKey(app)] = nil
        if let old = state.hashByApp.removeValue(forKey: app), state.appByHash[old] == app {
            state.appByHash[old] = nil
        }
        guard let hash else { return }
        state.hashByApp[app] = hash
        state.appByHash[hash] = app
    }

    // MARK: Reading the store on a miss

    /// Whether a hash the index does not know may be looked up in `app`'s record now, taking one
    /// read of the budget when it may: not while a miss the store confirmed for `app` stands, nor
    /// when all apps together have used their reads of the last second.
    func mayRead(app: String, at now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            if let missed = state.misses[LiteralKey(app)], now < missed + limits.missHold { return false }
            if let counted = state.counted {
                let elapsed = counted.duration(to: now) / .seconds(1)
                state.budget = min(limits.perSecond, state.budget + max(0, elapsed) * limits.perSecond)
            }
            state.counted = now
            guard state.budget >= 1 else { return false }
            state.budget -= 1
            return true
        }
    }

    /// How many apps' misses are remembered (for tests).
    var missCount: Int { state.withLock { $0.misses.count } }

    /// Records that the store has no such token for `app` either: its misses are refused without a
    /// read until ``ReadLimits/missHold`` has passed or the app changes.
    func missed(app: String, at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            // Misses older than the hold decide nothing: dropped once there are many (the budget
            // keeps the ones within it to a few hundred).
            if state.misses.count >= 256 { state.misses = state.misses.filter { now < $0.value + limits.missHold } }
            state.misses[LiteralKey(app)] = now
        }
    }
}
