// P-256's curve equation in plain integer arithmetic, written apart from OpenSSL: whether 65 bytes
// are an uncompressed point on the curve (SEC 1 §2.3.4; FIPS 186-4 D.1.2.3), for fuzz-web-push-keys.

/// A number below 2^512 as 16 little-endian 32-bit limbs.
struct Wide: Equatable {
    var limbs: [UInt32]

    init(limbs: [UInt32]) { self.limbs = limbs + Array(repeating: 0, count: max(0, 16 - limbs.count)) }

    /// From 32 big-endian bytes.
    init(bigEndian bytes: ArraySlice<UInt8>) {
        let array = Array(bytes)
        self.init(
            limbs: (0..<8).map { index in
                let start = 28 - index * 4
                return array[start..<(start + 4)].reduce(0) { $0 << 8 | UInt32($1) }
            })
    }

    static func < (a: Wide, b: Wide) -> Bool {
        for index in stride(from: 15, through: 0, by: -1) where a.limbs[index] != b.limbs[index] {
            return a.limbs[index] < b.limbs[index]
        }
        return false
    }

    static func + (a: Wide, b: Wide) -> Wide {
        var out = [UInt32](repeating: 0, count: 16)
        var carry: UInt64 = 0
        for index in 0..<16 {
            let sum = UInt64(a.limbs[index]) + UInt64(b.limbs[index]) + carry
            out[index] = UInt32(truncatingIfNeeded: sum)
            carry = sum >> 32
        }
        return Wide(limbs: out)
    }

    /// a - b for a ≥ b.
    static func - (a: Wide, b: Wide) -> Wide {
        var out = [UInt32](repeating: 0, count: 16)
        var borrow: Int64 = 0
        for index in 0..<16 {
            var difference = Int64(a.limbs[index]) - Int64(b.limbs[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 1 << 32 }
            out[index] = UInt32(difference)
        }
        return Wide(limbs: out)
    }

    /// The product of two numbers below 2^256.
    static func * (a: Wide, b: Wide) -> Wide {
        var out = [UInt64](repeating: 0, count: 17)
        for i in 0..<8 {
            var carry: UInt64 = 0
            for j in 0..<8 {
                let product = UInt64(a.limbs[i]) * UInt64(b.limbs[j]) + out[i + j] + carry
                out[i + j] = product & 0xFFFF_FFFF
                carry = product >> 32
            }
            out[i + 8] += carry
        }
        return Wide(limbs: out.prefix(16).map { UInt32($0) })
    }

    /// The remainder modulo `m`, by binary long division (in place: one buffer).
    func modulo(_ m: Wide) -> Wide {
        var remainder = [UInt32](repeating: 0, count: 17)
        let modulus = m.limbs + [0]
        for bit in stride(from: 511, through: 0, by: -1) {
            // remainder = 2 · remainder + the next bit
            var carry = limbs[bit / 32] >> UInt32(bit % 32) & 1
            for index in 0..<17 {
                let out = remainder[index] >> 31
                remainder[index] = remainder[index] << 1 | carry
                carry = out
            }
            var atLeast = true
            for index in stride(from: 16, through: 0, by: -1) where remainder[index] != modulus[index] {
                atLeast = remainder[index] > modulus[index]
                break
            }
            guard atLeast else { continue }
            var borrow: UInt64 = 0
            for index in 0..<17 {
                let difference = UInt64(remainder[index]) &- UInt64(modulus[index]) &- borrow
                remainder[index] = UInt32(truncatingIfNeeded: difference)
                borrow = difference >> 63
            }
        }
        return Wide(limbs: Array(remainder.prefix(16)))
    }
}

enum P256Model {
    static let p = Wide(bigEndian: hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")[...])
    static let b = Wide(bigEndian: hex("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b")[...])

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)!
        }
    }

    /// Whether `point` is 04 || x || y with x, y < p and y² = x³ − 3x + b (mod p).
    static func isPoint(_ point: [UInt8]) -> Bool {
        guard point.count == 65, point[0] == 4 else { return false }
        let x = Wide(bigEndian: point[1..<33])
        let y = Wide(bigEndian: point[33..<65])
        guard x < p, y < p else { return false }
        let left = (y * y).modulo(p)
        let cube = ((x * x).modulo(p) * x).modulo(p)
        let threeX = (x + x + x).modulo(p)
        let right = ((cube + p - threeX).modulo(p) + b).modulo(p)
        return left == right
    }
}
