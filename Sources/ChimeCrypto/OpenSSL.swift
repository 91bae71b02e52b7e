import CLibCrypto
import ChimeCore

/// What ChimeCrypto shares with OpenSSL: its error queue and the static names its parameters take.
enum OpenSSL {
    /// A ``ChimeError`` for a failed call, with the reasons OpenSSL queued on this thread (which are
    /// taken off the queue, so they never turn up in a later, unrelated error).
    static func failure(_ what: String, code: ChimeError.Code = .invalidValue) -> ChimeError {
        var reasons: [String] = []
        while case let error = ERR_get_error(), error != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(error, &text, text.count)
            reasons.append(
                String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return ChimeError(code, reasons.isEmpty ? what : "\(what) (OpenSSL: \(reasons.joined(separator: "; ")))")
    }

    /// Forgets what earlier failed calls queued, before a call whose failure is an ordinary answer
    /// (a signature that does not verify).
    static func clearErrors() { ERR_clear_error() }

    /// One DER value read with an OpenSSL `d2i_…` function, or nil when it is not one — trailing
    /// bytes after the value included (the value is then freed with `free`).
    static func readDER(
        _ der: [UInt8], read: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
        free: (OpaquePointer) -> Void
    ) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let value = read(&cursor, buffer.count) else { return nil }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                free(value)
                return nil
            }
            return value
        }
    }

    /// A C string that lives as long as the program: OpenSSL's parameter arrays and builders keep
    /// the pointer to a parameter's name instead of copying it.
    static func name(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
