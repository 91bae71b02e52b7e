import ChimeCore
import ChimeDesktop
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts the desktop's browser where there is a desktop: for `chime open`, and for the web
/// center's reply field when a desktop pop-up's text-input action is chosen.
package enum Browser {
    /// The opener to use (`xdg-open`, or `$BROWSER`), when a desktop session is present.
    package static func opener(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let hasDesktop = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        if let browser = environment["BROWSER"], !browser.isEmpty, hasDesktop { return browser }
        guard hasDesktop else { return nil }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/xdg-open") {
            return "\(directory)/xdg-open"
        }
        return nil
    }

    /// How long a sign-in page is kept: the lifetime of the code it holds.
    package static let pageLifetime: Duration = .seconds(Int(WebSessions.codeLifetime))

    /// Opens a sign-in link (`…/#login=CODE`) in the browser without putting it on a command line,
    /// where every local user can read it in `/proc`: the link goes in a redirect page readable by
    /// this user alone (``LoginPage``), and the opener is started on the page's `file://` URL. The
    /// page is removed after `lifetime`, by a process of its own, so it goes even when the caller
    /// (`chime open`) has exited. False when the page could not be written or the opener not started.
    package static func launch(_ opener: String, link: String, lifetime: Duration = pageLifetime) -> Bool {
        guard let page = try? LoginPage(link: link) else { return false }
        page.remove(after: lifetime)
        // Reaped by its own thread whenever it ends.
        return
            (try? ChildProcess(
                executable: "/usr/bin/env", arguments: [opener, page.url], stdin: .null, stdout: .null, stderr: .null))
            != nil
    }
}

/// A page that sends the browser on to a sign-in link, in a directory of its own (mode 0700) as a
/// file only its owner can read (mode 0600), as notebook servers hand their tokens to browsers:
/// the link is never on a command line. In `$XDG_RUNTIME_DIR` when there is one, else the
/// temporary directory.
///
/// ```swift
/// let page = try LoginPage(link: "http://127.0.0.1:7878/#login=CODE")
/// // start the browser on page.url (file:///run/user/1000/chime-login-XXXXXX/login.html)
/// page.remove(after: .seconds(120))
/// ```
package struct LoginPage: Sendable {
    /// The page's directory and file.
    package let directory: String
    package let path: String

    /// The page's `file://` URL.
    package var url: String { URL(fileURLWithPath: path).absoluteString }

    /// Writes the page for `link`.
    package init(link: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        var parent = runtime ?? NSTemporaryDirectory()
        while parent.count > 1, parent.hasSuffix("/") { parent.removeLast() }
        var template = Array((parent + "/chime-login-XXXXXX").utf8CString)
        // mkdtemp makes the directory with mode 0700.
        guard mkdtemp(&template) != nil else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        directory = cText(template)
        path = directory + "/login.html"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            rmdir(directory)
            throw error
        }
        defer { close(fd) }
        let bytes = Array(Self.html(link: link).utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            remove()
            throw POSIXError(.EIO)
        }
    }

    /// The page: a refresh to the link at once, and the link to follow by hand.
    static func html(link: String) -> String {
        let escaped = link.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        return """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0;url=\(escaped)">
            <title>Chime: signing in</title></head>
            <body><p><a href="\(escaped)">Open the Chime notification center</a></p></body></html>

            """
    }

    /// Removes the page and its directory now.
    package func remove() {
        unlink(path)
        rmdir(directory)
    }

    /// Removes the page and its directory after `delay`, in a process of its own (in a session of
    /// its own, so it outlives the caller and its terminal); at once when that cannot start.
    package func remove(after delay: Duration) {
        let seconds = String(
            format: "%.3f", Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
        let script = #"sleep "$1"; rm -f -- "$2"; rmdir -- "$3""#
        do {
            _ = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", script, "chime-login-page", seconds, path, directory],
                stdin: .null, stdout: .null, stderr: .null, newSession: true)
        } catch {
            remove()
        }
    }
}
