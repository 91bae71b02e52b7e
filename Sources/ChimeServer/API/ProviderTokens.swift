import ChimeCore
import ChimeCrypto
import Foundation
import Synchronization

/// APNs provider tokens checked as Apple checks them: an ES256 JWT whose `kid` is a registered
/// team key, `iss` that key's team, `iat` within the last hour, signed with the key; a connection
/// changing its token for the same key at most every 20 minutes; the topic an app of the key's team.
///
/// Keys live in the app records (``AppRecord/apnsProvider``, in the store, so every node sees the
/// same). Apple counts token updates per connection: a provider that opens a new connection with a
/// new token for each push (kalyke-apns does) is served, one that changes the token of an open
/// connection sooner than 20 minutes after the last is `TooManyProviderTokenUpdates`. So which
/// token a connection last used for each key, and since when, is kept on the connection
/// (``HTTPConnection``, gone with it); what this keeps is only the token each key was last verified
/// with, which spares verifying the same token's signature again (one entry per registered key).
final class ProviderTokens: Sendable {
    /// Apple: a token more than an hour old is refused.
    static let lifetime: TimeInterval = 60 * 60
    /// Apple: a new token for the same key at most every 20 minutes.
    static let updateInterval: TimeInterval = 20 * 60
    /// How far in the future an `iat` may be (clocks differ a little).
    static let clockSkew: TimeInterval = 5 * 60

    /// Why a token is refused: the APNs reason, its status, and a message naming what is wrong.
    struct Refusal: Error, Equatable {
        var reason: String
        var status: Int
        var message: String

        static func invalid(_ message: String) -> Refusal {
            Refusal(reason: "InvalidProviderToken", status: 403, message: message)
        }
    }

    /// The token each key was last verified with.
    private let verified = Mutex<[APNsProvider.Key: String]>([:])

    /// A token's `iat` in seconds since 1970: a JSON number, as RFC 7519 has it, or a string of
    /// decimal digits, as kalyke-apns (a provider library on PyPI, used against Apple's service)
    /// sends it (`"iat": "1764796828"`).
    static func issuedAt(_ token: JSONWebToken) -> Int64? {
        if let seconds = token.seconds("iat") { return seconds }
        guard let text = token.string("iat"), (1...12).contains(text.utf8.count),
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return Int64(text)
    }

    /// Checks `text` for a push to `topic` (nil when no app has that bundle identifier: the token is
    /// still checked first, so an unauthenticated caller learns nothing about which apps exist).
    /// The key is looked for on the topic's own record first, then among the team keys registered
    /// under the token's key id (`providers`, the server's ``TokenIndex``).
    /// `connection` is the one the push came on (nil: a connection of its own, so a new token is
    /// never an update).
    ///
    /// - Returns: normally; the caller then answers `BadTopic` for a nil `topic`.
    /// - Throws: ``Refusal``.
    func check(
        _ text: String, topic: AppRecord?, now: Date, connection: HTTPConnection? = nil,
        providers: (_ keyID: String) async throws -> [APNsProvider]
    ) async throws {
        let token: JSONWebToken
        do {
            token = try JSONWebToken(parsing: text)
        } catch {
            throw Refusal.invalid("the provider token is not an ES256 JWT: \(error.message)")
        }
        guard let keyID = token.keyID else {
            throw Refusal.invalid("the provider token's header has no kid (the key id)")
        }
        guard let team = token.string("iss") else {
            throw Refusal.invalid("the provider token has no iss (the team id)")
        }
        guard let issued = Self.issuedAt(token) else {
            throw Refusal.invalid("the provider token has no iat (when it was made, in seconds)")
        }

        var owner = topic?.apnsProvider.flatMap { Self.key(keyID, team: team, in: [$0]) }
        if owner == nil { owner = Self.key(keyID, team: team, in: try await providers(keyID)) }
        guard let (keyTeam, key) = owner else {
            throw Refusal.invalid(
                "no provider key \(keyID.prefix(64)) is registered; register it with "
                    + "`chime apps set APP --apns-key AuthKey_\(keyID.prefix(64)).p8 --key-id \(keyID.prefix(64)) --team-id TEAMID`"
            )
        }
        guard keyTeam == team else {
            throw Refusal.invalid("the provider token's iss \(team.prefix(64)) is not key \(keyID)'s team (\(keyTeam))")
        }
        if verified.withLock({ $0[key] }) != text {
            guard let publicKey = try? P256PublicKey(rawRepresentation: key.publicKey),
                token.isSignatureValid(for: publicKey)
            else {
                throw Refusal.invalid(
                    "the provider token's signature does not verify with key \(keyID) of team \(team)")
            }
            verified.withLock { $0[key] = text }
        }
        let age = now.timeIntervalSince1970 - TimeInterval(issued)
        guard age <= Self.lifetime else {
            throw Refusal(
                reason: "ExpiredProviderToken", status: 403,
                message:
                    "the provider token was made \(Int(age / 60)) minutes ago; tokens older than an hour are refused, make a new one"
            )
        }
        guard age >= -Self.clockSkew else {
            throw Refusal.invalid(
                "the provider token's iat is \(Int(-age)) s in the future; check the provider's clock")
        }
        if let topic, topic.apnsProvider?.teamID != team {
            throw Refusal(
                reason: "TopicDisallowed", status: 400,
                message:
                    "key \(keyID) of team \(team) may not push to \(topic.bundleIdentifier); make it an app of the team with "
                    + "`chime apps set \(topic.bundleIdentifier) --team-id \(team)`")
        }
        if let wait = connection?.withValue(ProviderTokenBook(), { $0.admit(text, key: key, now: now) }) {
            throw Refusal(
                reason: "TooManyProviderTokenUpdates", status: 429,
                message:
                    "this connection changed its token for key \(keyID) \(Int((Self.updateInterval - wait) / 60)) minutes after the last; "
                    + "change a connection's token at most every 20 minutes (\(Int(wait.rounded(.up))) s from now), or open a new connection"
            )
        }
    }

    /// The registered key `id`, preferring one of team `team` when several apps name the same id.
    private static func key(_ id: String, team: String, in providers: [APNsProvider]) -> (
        team: String, key: APNsProvider.Key
    )? {
        var found: (team: String, key: APNsProvider.Key)?
        for provider in providers {
            guard let key = provider.key, key.id == id else { continue }
            if provider.teamID == team { return (provider.teamID, key) }
            found = found ?? (provider.teamID, key)
        }
        return found
    }
}

/// Which token one connection last used for each key, and since when: a pure state machine, "now"
/// passed in. Kept on the connection (``HTTPConnection/withValue(_:_:)``).
struct ProviderTokenBook: Sendable {
    struct Entry: Sendable {
        var token: String
        var since: Date
    }

    /// By key id and public key (a key registered again with another public key starts afresh).
    private(set) var entries: [APNsProvider.Key: Entry] = [:]

    /// Takes `token` as the one the connection uses for `key` from now on, unless it took another
    /// token for the key less than ``ProviderTokens/updateInterval`` ago.
    ///
    /// - Returns: nil when admitted; else the seconds until a new token would be.
    mutating func admit(_ token: String, key: APNsProvider.Key, now: Date) -> TimeInterval? {
        if let entry = entries[key] {
            if entry.token == token { return nil }
            let since = now.timeIntervalSince(entry.since)
            if since < ProviderTokens.updateInterval { return ProviderTokens.updateInterval - since }
        }
        entries[key] = Entry(token: token, since: now)
        return nil
    }
}
