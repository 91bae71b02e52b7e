import CNGHTTP2
import Foundation
import FuzzSupport

// The client's side of the wire, written apart from the server: frames laid out by hand (RFC 9113
// §4.1, §6), header blocks compressed with nghttp2's HPACK deflater, and the server's frames read
// back with nghttp2's inflater.

/// Frame types (RFC 9113 §6).
enum FrameType: UInt8 {
    case data = 0, headers, priority, rstStream, settings, pushPromise, ping, goaway, windowUpdate, continuation
}

/// Flags (RFC 9113 §6).
enum FrameFlag {
    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let padded: UInt8 = 0x8
    static let priority: UInt8 = 0x20
}

/// Error codes (RFC 9113 §7).
enum ErrorCode {
    static let noError: UInt32 = 0x0
    static let protocolError: UInt32 = 0x1
    static let internalError: UInt32 = 0x2
    static let refusedStream: UInt32 = 0x7
    static let enhanceYourCalm: UInt32 = 0xB
}

/// One frame: its 9-byte header and payload.
func frame(_ type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
    let length = payload.count
    return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
        + bigEndian(stream & 0x7FFF_FFFF) + payload
}

func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

func readUInt32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
}

/// A client's HPACK context: header lists become header blocks as nghttp2's deflater writes them.
final class HeaderEncoder {
    private var deflater: OpaquePointer?

    init() { nghttp2_hd_deflate_new(&deflater, 4096) }
    deinit { nghttp2_hd_deflate_del(deflater) }

    /// The header block of `fields` (names and values as bytes, sent as they are).
    func encode(_ fields: [(name: [UInt8], value: [UInt8])]) -> [UInt8] {
        var storage: [UInt8] = []
        var spans: [(Int, Int, Int, Int)] = []
        for (name, value) in fields {
            let nameStart = storage.count
            storage += name
            let valueStart = storage.count
            storage += value
            spans.append((nameStart, name.count, valueStart, value.count))
        }
        storage.append(0)  // a base address even for an empty list
        return storage.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            let list = spans.map {
                nghttp2_nv(
                    name: base + $0.0, value: base + $0.2, namelen: $0.1, valuelen: $0.3,
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            let bound = nghttp2_hd_deflate_bound(deflater, list, list.count)
            var block = [UInt8](repeating: 0, count: bound)
            let count = nghttp2_hd_deflate_hd(deflater, &block, bound, list, list.count)
            require(count >= 0, "nghttp2's deflater failed (\(count)) on \(fields.count) fields")
            return Array(block.prefix(count))
        }
    }
}

/// What the server sent, frame by frame, with its header blocks decoded.
final class ServerFrames {
    enum Frame {
        case settings(ack: Bool, [(id: UInt16, value: UInt32)])
        /// A complete header block (HEADERS and its CONTINUATIONs) on a stream.
        case headers(stream: UInt32, [(name: String, value: String)], endStream: Bool)
        case data(stream: UInt32, [UInt8], endStream: Bool)
        case rstStream(stream: UInt32, code: UInt32)
        case goaway(lastStream: UInt32, code: UInt32)
        case pushPromise(stream: UInt32)
        case other(type: UInt8, stream: UInt32)
    }

    private var inflater: OpaquePointer?
    private var buffer: [UInt8] = []
    /// A header block being continued: its stream, its bytes so far, END_STREAM of its HEADERS.
    private var block: (stream: UInt32, bytes: [UInt8], endStream: Bool)?

    init() { nghttp2_hd_inflate_new(&inflater) }
    deinit { nghttp2_hd_inflate_del(inflater) }

    /// Takes bytes the server wrote and returns the frames completed by them.
    func read(_ bytes: UnsafeRawBufferPointer) -> [Frame] {
        buffer += bytes
        var frames: [Frame] = []
        var offset = 0
        while buffer.count - offset >= 9 {
            let length = Int(buffer[offset]) << 16 | Int(buffer[offset + 1]) << 8 | Int(buffer[offset + 2])
            guard buffer.count - offset >= 9 + length else { break }
            let type = buffer[offset + 3]
            let flags = buffer[offset + 4]
            let stream = readUInt32(buffer[(offset + 5)...]) & 0x7FFF_FFFF
            var payload = Array(buffer[(offset + 9)..<(offset + 9 + length)])
            offset += 9 + length
            require(
                block == nil || type == FrameType.continuation.rawValue,
                "the server interleaved a frame of type \(type) inside a header block")
            switch FrameType(rawValue: type) {
            case .settings?:
                require(stream == 0 && length % 6 == 0, "the server's SETTINGS on stream \(stream), \(length) bytes")
                let entries = stride(from: 0, to: length, by: 6).map {
                    (UInt16(payload[$0]) << 8 | UInt16(payload[$0 + 1]), readUInt32(payload[($0 + 2)...]))
                }
                frames.append(.settings(ack: flags & FrameFlag.ack != 0, entries))
            case .headers?, .continuation?:
                if type == FrameType.headers.rawValue {
                    if flags & FrameFlag.padded != 0, let pad = payload.first {
                        payload = Array(payload.dropFirst().dropLast(Int(pad)))
                    }
                    if flags & FrameFlag.priority != 0 { payload = Array(payload.dropFirst(5)) }
                    block = (stream, payload, flags & FrameFlag.endStream != 0)
                } else {
                    require(
                        block?.stream == stream,
                        "the server sent a CONTINUATION on stream \(stream) outside a header block")
                    block?.bytes += payload
                }
                if flags & FrameFlag.endHeaders != 0, let whole = block {
                    block = nil
                    frames.append(.headers(stream: stream, decode(whole.bytes), endStream: whole.endStream))
                }
            case .data?:
                if flags & FrameFlag.padded != 0, let pad = payload.first {
                    payload = Array(payload.dropFirst().dropLast(Int(pad)))
                }
                frames.append(.data(stream: stream, payload, endStream: flags & FrameFlag.endStream != 0))
            case .rstStream?:
                frames.append(.rstStream(stream: stream, code: readUInt32(payload[...])))
            case .goaway?:
                frames.append(
                    .goaway(lastStream: readUInt32(payload[...]) & 0x7FFF_FFFF, code: readUInt32(payload.dropFirst(4))))
            case .pushPromise?:
                frames.append(.pushPromise(stream: stream))
            default:
                frames.append(.other(type: type, stream: stream))
            }
        }
        buffer.removeFirst(offset)
        return frames
    }

    /// A header block the server compressed, decoded with the client's context.
    private func decode(_ block: [UInt8]) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        block.withUnsafeBufferPointer { input in
            var offset = 0
            while true {
                var field = nghttp2_nv()
                var flags: Int32 = 0
                let consumed = nghttp2_hd_inflate_hd2(
                    inflater, &field, &flags, input.baseAddress.map { $0 + offset }, input.count - offset, 1)
                require(consumed >= 0, "the server's header block does not decode (\(consumed))")
                offset += consumed
                if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                    fields.append(
                        (
                            String(
                                decoding: UnsafeBufferPointer(start: field.name, count: field.namelen), as: UTF8.self),
                            String(
                                decoding: UnsafeBufferPointer(start: field.value, count: field.valuelen), as: UTF8.self)
                        ))
                }
                if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
                    nghttp2_hd_inflate_end_headers(inflater)
                    break
                }
                if consumed == 0 && flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) == 0 { break }
            }
        }
        return fields
    }
}
