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

    /// An answer of the service read with the Apple layer's decoder (`decode`); one the decoder
    /// refuses ends the command naming it and the member: "the service's app is not readable:
    /// [1].created is missing; expected a date".
    static func readAnswer<Value>(_ what: String, _ decode: () throws(ChimeError) -> Value) throws -> Value {
        do throws(ChimeError) { return try decode() } catch {
            throw CommandError("the service's \(what) is not readable: \(error.message)")
        }
    }

    /// The apps of `GET /v1/apps`, each read as ``AppRecord/init(json:field:)`` reads it.
    static func appRecords(_ items: [JSONValue]) throws -> [AppRecord] {
        try items.enumerated().map { index, item in
            try readAnswer("app") { () throws(ChimeError) in try AppRecord(json: item, field: "[\(index)]") }
        }
    }

    /// What a notification says first: its title, else its body (an APNs alert given as a string is
    /// the body), else its subtitle.
    static func headline(_ content: NotificationContent) -> String {
        [content.title, content.body, content.subtitle].first { !$0.isEmpty } ?? ""
    }
}
