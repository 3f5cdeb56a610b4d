import ProxyCore
import XCTest

/// Punycode against RFC 3492's own samples, IDN labels and hostile input.
final class PunycodeTests: XCTestCase {
    /// RFC 3492 §7.1 sample strings (Unicode, Punycode), by their letter in the RFC.
    private static let rfcSamples: [(name: String, unicode: String, punycode: String)] = [
        ("A Arabic (Egyptian)",
         "\u{0644}\u{064A}\u{0647}\u{0645}\u{0627}\u{0628}\u{062A}\u{0643}\u{0644}\u{0645}\u{0648}\u{0634}\u{0639}\u{0631}\u{0628}\u{064A}\u{061F}",
         "egbpdaj6bu4bxfgehfvwxn"),
        ("B Chinese (simplified)", "他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),
        ("C Chinese (traditional)", "他們爲什麽不說中文", "ihqwctvzc91f659drss3x8bo0yb"),
        ("D Czech", "Pro\u{010D}prost\u{011B}nemluv\u{00ED}\u{010D}esky", "Proprostnemluvesky-uyb24dma41a"),
        ("E Hebrew",
         "\u{05DC}\u{05DE}\u{05D4}\u{05D4}\u{05DD}\u{05E4}\u{05E9}\u{05D5}\u{05D8}\u{05DC}\u{05D0}\u{05DE}\u{05D3}\u{05D1}\u{05E8}\u{05D9}\u{05DD}\u{05E2}\u{05D1}\u{05E8}\u{05D9}\u{05EA}",
         "4dbcagdahymbxekheh6e0a7fei0b"),
        ("F Hindi (Devanagari)", "यहलोगहिन्दीक्योंनहींबोलसकतेहैं", "i1baa7eci9glrd9b2ae1bj0hfcgg6iyaf8o0a1dig0cd"),
        ("G Japanese", "なぜみんな日本語を話してくれないのか", "n8jok5ay5dzabd5bym9f0cm5685rrjetr6pdxa"),
        ("L", "3年B組金八先生", "3B-ww4c5e180e575a65lsy2b"),
        ("M", "安室奈美恵-with-SUPER-MONKEYS", "-with-SUPER-MONKEYS-pc58ag80a8qai00g7n9n"),
        ("N", "Hello-Another-Way-それぞれの場所", "Hello-Another-Way--fc4qua05auwb3674vfr0b"),
        ("O", "ひとつ屋根の下2", "2-u9tlzr9756bt3uc0v"),
        ("P", "MajiでKoiする5秒前", "MajiKoi5-783gue6qz075azm5e"),
        ("Q", "パフィーdeルンバ", "de-jg4avhby1noc0d"),
        ("R", "そのスピードで", "d9juau41awczczp"),
        ("S all basic", "-> $1.00 <-", "-> $1.00 <--"),
    ]

    /// Every RFC 3492 §7.1 sample encodes to the RFC's Punycode, basic code points keeping their case.
    func testEncodesRFCSamples() {
        for sample in Self.rfcSamples {
            XCTAssertEqual(Punycode.encode(sample.unicode), sample.punycode, sample.name)
        }
    }

    /// Every RFC 3492 §7.1 sample decodes back to its Unicode text.
    func testDecodesRFCSamples() {
        for sample in Self.rfcSamples {
            XCTAssertEqual(Punycode.decode(sample.punycode), sample.unicode, sample.name)
        }
    }

    /// Common IDN labels encode as registries publish them.
    func testIDNLabels() {
        XCTAssertEqual(Punycode.encode("bücher"), "bcher-kva")
        XCTAssertEqual(Punycode.encode("münchen"), "mnchen-3ya")
        XCTAssertEqual(Punycode.decode("bcher-kva"), "bücher")
        XCTAssertEqual(Punycode.decode("mnchen-3ya"), "münchen")
    }

    /// encode then decode gives the input back, for mixed, all-non-ASCII and astral-plane text.
    func testRoundTrips() {
        for text in ["bücher", "ü", "日本語", "faß", "😀x😀", "a-b-ü-c", "\u{10FFFF}", "Ünïcödé-ÀÉÎ"] {
            let encoded = Punycode.encode(text)
            XCTAssertNotNil(encoded, text)
            XCTAssertEqual(encoded.flatMap { Punycode.decode($0) }, text, text)
        }
    }

    /// Edge inputs: the empty label, all-ASCII labels (delimiter appended), and Substring input.
    func testEdgeInputs() {
        XCTAssertEqual(Punycode.encode(""), "")
        XCTAssertEqual(Punycode.decode(""), "")
        XCTAssertEqual(Punycode.encode("abc"), "abc-")
        XCTAssertEqual(Punycode.decode("abc-"), "abc")
        XCTAssertEqual(Punycode.encode("www.bücher.de".split(separator: ".")[1]), "bcher-kva")
    }

    /// Digits are read case-insensitively when decoding.
    func testDecodeIgnoresDigitCase() {
        XCTAssertEqual(Punycode.decode("bcher-KVA"), "bücher")
    }

    /// Invalid Punycode is nil, never a trap: non-ASCII, bad digits, truncation, overflow,
    /// a decoded value that is not a Unicode scalar.
    func testDecodeRefusesInvalidInput() {
        XCTAssertNil(Punycode.decode("bü-kva"), "non-ASCII basic part")
        XCTAssertNil(Punycode.decode("bcher-k!a"), "not a digit")
        XCTAssertNil(Punycode.decode("-"), "a lone delimiter is read as a digit")
        XCTAssertNil(Punycode.decode("bcher-kv9"), "truncated integer (last digit not below threshold)")
        XCTAssertNil(Punycode.decode(String(repeating: "9", count: 64)), "overflow")
        XCTAssertNil(Punycode.decode("ib9b"), "decodes to the surrogate U+D800")
        XCTAssertNil(Punycode.decode("do32g"), "decodes past U+10FFFF")
    }

    /// A delta past UInt32 (thousands of basic code points before U+10FFFF) makes encode return nil.
    func testEncodeOverflowIsNil() {
        XCTAssertNil(Punycode.encode(String(repeating: "a", count: 5000) + "\u{10FFFF}"))
    }
}
