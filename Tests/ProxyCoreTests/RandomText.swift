/// Random strings over a small alphabet, for the parsers' attack tests (hosts, targets,
/// IPv4 notations): the alphabet holds the characters that steer the parser, so short strings
/// reach its odd corners often.
struct RandomText {
    private let alphabet: [Character]
    private var generator = SystemRandomNumberGenerator()

    init(_ alphabet: String) {
        self.alphabet = Array(alphabet)
    }

    /// A string of a random length in `lengths`.
    mutating func next(lengths: ClosedRange<Int>) -> String {
        let length = Int.random(in: lengths, using: &generator)
        return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
