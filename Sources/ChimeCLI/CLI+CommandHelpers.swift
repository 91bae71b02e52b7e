import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    /// A file's contents, or a failure naming the file and the system's reason.
    static func readFile(_ path: String, what: String) throws -> Data {
        if let data = FileManager.default.contents(atPath: path) { return data }
        let reason: String
        let fd = Glibc.open(path, O_RDONLY)
        if fd >= 0 {
            Glibc.close(fd)
            reason = "it could not be read"
        } else {
            reason = String(cString: strerror(errno))
        }
        throw CommandError("cannot read \(what) \(path): \(reason)")
    }

    /// "  (alerted again every 60 s for 1800 s)" for a request that escalates, else "".
    static func escalates(_ request: NotificationRequest) -> String {
        guard let escalation = request.escalation else { return "" }
        return
            "  (alerted again every \(Validation.seconds(escalation.interval)) s for \(Validation.seconds(escalation.duration)) s)"
    }

    /// What a notification says first: its title, else its body (an APNs alert given as a string is
    /// the body), else its subtitle.
    static func headline(_ content: NotificationContent) -> String {
        [content.title, content.body, content.subtitle].first { !$0.isEmpty } ?? ""
    }
}
