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

    /// "  (alerted again every 60 s for 1800 s)" for an item that escalates, else "".
    static func escalates(_ item: JSONValue) -> String {
        guard let every = item[JSONFieldName.Request.escalateEvery]?.numberValue,
            let duration = item[JSONFieldName.Request.escalateFor]?.numberValue
        else {
            return ""
        }
        return "  (alerted again every \(Validation.seconds(every)) s for \(Validation.seconds(duration)) s)"
    }

    /// What a notification says first: its title, else its body (an APNs alert given as a string is
    /// the body), else its subtitle.
    static func headline(_ notification: JSONValue?) -> String {
        for field in [JSONFieldName.Content.title, JSONFieldName.Content.body, JSONFieldName.Content.subtitle] {
            if let text = notification?[field]?.stringValue, !text.isEmpty { return text }
        }
        return ""
    }
}
