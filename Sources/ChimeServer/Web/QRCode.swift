import CQREncode
import Foundation

/// A QR code of a short text (a sign-in link), made with libqrencode, drawn in a terminal or as SVG.
///
/// ```swift
/// let code = try QRCode("http://192.168.1.20:7878/#login=…")
/// print(code.terminalText())   // scan it with a phone's camera
/// ```
public struct QRCode: Sendable {
    /// The modules row by row, `true` for dark; square, without the quiet zone.
    public let modules: [[Bool]]

    /// Encodes `text` as bytes, error correction level M (a link stays readable with 15% damaged).
    ///
    /// - Throws: ``ServerError`` `invalidConfiguration` when the text cannot be encoded (too long).
    public init(_ text: String) throws {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw ServerError(
                .invalidConfiguration,
                "cannot make a QR code of a \(text.utf8.count)-byte text (at most about 2,300 bytes)")
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        var rows: [[Bool]] = []
        rows.reserveCapacity(width)
        for y in 0..<width {
            rows.append((0..<width).map { x in code.pointee.data[y * width + x] & 1 == 1 })
        }
        modules = rows
    }

    /// Two rows of modules per line of text, with half blocks, dark on light, with the quiet zone
    /// of four modules the standard asks for (a phone reads it from a dark or a light terminal).
    public func terminalText() -> String {
        let quiet = 4
        let size = modules.count + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (column, row) = (x - quiet, y - quiet)
            guard row >= 0, row < modules.count, column >= 0, column < modules.count else { return false }
            return modules[row][column]
        }
        var lines: [String] = []
        for y in stride(from: 0, to: size, by: 2) {
            var line = "\u{1B}[30;47m"  // black on white, whatever the terminal's colours
            for x in 0..<size {
                switch (dark(x, y), y + 1 < size && dark(x, y + 1)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines.joined(separator: "\n")
    }

    /// An SVG image: one path of unit squares, with the quiet zone.
    public func svg() -> String {
        let quiet = 4
        let size = modules.count + 2 * quiet
        var path = ""
        for (y, row) in modules.enumerated() {
            for (x, isDark) in row.enumerated() where isDark { path += "M\(x + quiet) \(y + quiet)h1v1h-1z" }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(size) \(size)" shape-rendering="crispEdges">\
            <rect width="\(size)" height="\(size)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
            """
    }
}
