import ChimeCore
import ChimeDesktop
import Foundation

/// How `chime serve` lets the user type a reply chosen on a desktop pop-up whose notification
/// server has no inline reply field: it opens the web center in the desktop's browser with a
/// one-time sign-in link that opens that notification's reply field
/// (`http://127.0.0.1:7878/#login=CODE&reply=APP/NOTIFICATION/ACTION`), handed to the browser in a
/// private page (``LoginPage``), never on its command line. The answer then comes from
/// the web center, so the desktop sends nothing itself. Without a browser (or when the service
/// listens on a Unix socket only) it falls back to `fallback`, a dialog where one is installed.
///
/// ```swift
/// let prompt = WebCenterReplyPrompt(baseURL: { server.url }, codes: { sessions.makeCode().code },
///                                   opener: "/usr/bin/xdg-open", fallback: DialogReplyPrompt.find())
/// ```
struct WebCenterReplyPrompt: DesktopReplyPrompt {
    /// The web center's address, or `nil` when it is not reachable over TCP (read when a reply is
    /// asked: the server may start after the prompt is made).
    let baseURL: @Sendable () -> String?
    /// A new one-time sign-in code.
    let codes: @Sendable () -> String
    /// The browser opener (`xdg-open`, `$BROWSER`), or `nil` when there is no desktop browser.
    let opener: String?
    let fallback: (any DesktopReplyPrompt)?

    /// The sign-in link that opens the reply field of `question`'s notification.
    static func link(baseURL: String, code: String, question: ReplyQuestion) -> String {
        let target = [question.bundleIdentifier, question.notification, question.action.identifier].map(
            PercentEncoding.encode)
        return "\(baseURL)/#login=\(PercentEncoding.encode(code))&reply=\(target.joined(separator: "/"))"
    }

    func ask(_ question: ReplyQuestion) async -> ReplyPromptOutcome {
        if let baseURL = baseURL(), let opener,
            Browser.launch(opener, link: Self.link(baseURL: baseURL, code: codes(), question: question))
        {
            return .handedOver
        }
        return await fallback?.ask(question) ?? .cancelled
    }
}
