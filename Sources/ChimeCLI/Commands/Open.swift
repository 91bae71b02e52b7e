import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: open

    static let open = Command(
        name: "open",
        summary:
            "sign in to the web notification center: a one-time login link, opened in the browser or scanned by a phone",
        usage: "chime open [--print] [--qr] [--url BASE] [--data DIR] [--json]",
        examples: [
            "chime open", "chime open --print",
            "chime open --qr                         # sign in from a phone on the same network",
            "chime open --print --url https://chime.example.org   # behind a reverse proxy",
        ],
        options: [
            .flag("print", "only print the link; do not start a browser"),
            .flag(
                "qr", "also draw the link as a QR code (drawn anyway in a terminal when the link reaches other devices)"
            ),
            .value(
                "url",
                "the base URL other devices reach the service at (a reverse proxy's https://…); default: the service's, with its network address when it listens on 0.0.0.0"
            ),
        ],
        run: { arguments, cli in
            guard arguments.positionals.isEmpty else {
                throw UsageError("open takes no arguments; got \(arguments.positionals.joined(separator: " "))")
            }
            let client = try cli.client(arguments)
            guard case .url(let serviceURL) = client.endpoint else {
                throw CommandError(
                    "the service listens on a Unix socket, which a browser cannot reach; start it with --listen HOST:PORT for the web center, or put a reverse proxy in front and pass its address with --url"
                )
            }
            let answer = try await client.send(.createLoginLink).json ?? .null
            let link = try readAnswer("sign-in link") { () throws(ChimeError) in try LoginLink(json: answer) }
            var base = arguments.value("url") ?? NetworkAddresses.reachable(serviceURL)
            guard let parsedBase = URL(string: base), parsedBase.scheme == "http" || parsedBase.scheme == "https",
                parsedBase.host != nil
            else {
                throw UsageError(
                    "--url is '\(base)'; give the base URL other devices open, such as https://chime.example.org")
            }
            while base.hasSuffix("/") { base.removeLast() }
            let url = base + link.path
            if arguments.has("json") {
                cli.write(
                    JSONValue.object(["url": .string(url), "expires": JSONMapping.json(link.expires)]).serialized(
                        pretty: true))
                return 0
            }
            cli.write(url)
            let local = ["127.0.0.1", "localhost", "::1"].contains(parsedBase.host ?? "")
            if arguments.has("qr") || (!local && Terminal.canDrawQRCodes) {
                if let code = try? QRCode(url) { cli.write(code.terminalText()) }
            }
            cli.writeError(
                "This link signs in once, within 2 minutes. Keep it private: it opens your notification center.")
            if !local && parsedBase.scheme == "http" {
                cli.writeError(
                    "Over plain HTTP others on the network can read what you do; see README \"Run it for real\" for TLS."
                )
            }
            if !arguments.has("print"), !arguments.has("qr"), local, let opener = Browser.opener() {
                if Browser.launch(opener, link: url) {
                    cli.writeError("Opened in your browser (\(opener)).")
                } else {
                    cli.writeError("Could not start \(opener); open the link above yourself.")
                }
            }
            return 0
        })
}
