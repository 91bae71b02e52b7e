import ChimeCore
import Foundation

extension APNsEndpoint {
    /// The apps the TLS client's certificate may push to: those it is registered for
    /// (`chime apps set APP --apns-certificate FILE.pem`), matched by the certificate's or its
    /// key's SHA-256, while the certificate is within its validity dates.
    ///
    /// - Throws: ``Failure`` `MissingProviderToken` (403) when the client presented no
    ///   certificate, `BadCertificate` (403) when it is registered for no app or is outside its
    ///   validity dates.
    func certifiedApps(_ request: HTTPRequest) async throws -> [String] {
        guard let presented = request.clientCertificate else {
            throw Failure(
                "MissingProviderToken", 403,
                "no authorization: bearer <token> header and no client certificate; send a provider token (an ES256 JWT signed with the team's key), the app's token, or connect with the app's registered certificate (HTTP/2 over TLS)"
            )
        }
        try await api.loadTokens()
        let apps = api.tokens.apps(certifiedBy: presented)
        guard !apps.isEmpty else {
            throw Failure(
                "BadCertificate", 403,
                "the client certificate (SHA-256 \(presented.sha256Hex)) is registered for no app; register it with `chime apps set APP --apns-certificate FILE.pem`"
            )
        }
        let now = api.engine.clock.now
        guard presented.isValid(at: now) else {
            throw Failure(
                "BadCertificate", 403,
                "the client certificate is valid from \(JSONMapping.formatDate(presented.notBefore)) to \(JSONMapping.formatDate(presented.notAfter)), not now (\(JSONMapping.formatDate(now)))"
            )
        }
        return apps
    }
}
