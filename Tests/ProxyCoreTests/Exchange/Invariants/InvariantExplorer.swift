@testable import ProxyCore
import XCTest

// MARK: the search

/// Depth-first over the reachable states, each explored once per remaining depth; the path so
/// far is kept on the side for traces.
struct Explorer {
    let config: StartConfig
    let depth: Int
    var synchronousHoldDecision = true
    var seen: [Node: Int] = [:]
    /// Late events a finished machine answered with no action: answered the same way again (the
    /// machine is deterministic), and an event with no action can only relax the checks after it.
    var quietLateEvents: Set<LateEvent> = []
    var transitions = 0
    /// First report per invariant message (without its details).
    var violations: [String: String] = [:]
    /// Test hook: changes the world after each event (to plant a bug in the monitor's view).
    var plant: ((inout PlantedWorld) -> Void)?
    private var path: [(Event, [ExchangeAction])] = []

    init(config: StartConfig, depth: Int, synchronousHoldDecision: Bool = true) {
        self.config = config
        self.depth = depth
        self.synchronousHoldDecision = synchronousHoldDecision
    }

    mutating func run() {
        var world = World(config: config, synchronousHoldDecision: synchronousHoldDecision, route: false)
        path = []
        for (event, actions, problems) in world.start(config) {
            path.append((event, actions))
            report(problems)
        }
        explore(world, remaining: depth)
    }

    private mutating func explore(_ world: World, remaining: Int) {
        let node = Node(world)
        if let known = seen[node], known >= remaining { return }
        seen[node] = remaining
        guard remaining > 0 else { return }
        let finished = world.machine.phase == .finished
        for event in world.environment.events {
            let late = LateEvent(machine: world.machine, event: event)
            if finished && plant == nil && quietLateEvents.contains(late) { continue }
            var next = world
            var (actions, problems) = next.deliver(event)
            if let plant {
                var planted = PlantedWorld(world: next, lastActions: actions)
                plant(&planted)
                next = planted.world
                problems += next.stateProblems()
            }
            transitions += 1
            if finished && actions.isEmpty && problems.isEmpty { quietLateEvents.insert(late) }
            path.append((event, actions))
            // Once finished, only what hands back a resource changes anything worth exploring;
            // the other late events are delivered (invariant 6) but not followed.
            if problems.isEmpty && (!finished || Self.handsBackResource(event)) {
                explore(next, remaining: remaining - 1)
            } else {
                report(problems)
            }
            path.removeLast()
        }
    }

    private mutating func report(_ problems: [String]) {
        for problem in problems where violations[Self.key(problem)] == nil {
            violations[Self.key(problem)] = problem + "\n    config: \(config.name)\n"
                + path.map { "    " + Self.line($0.0, $0.1) }.joined(separator: "\n")
        }
    }

    static func handsBackResource(_ event: Event) -> Bool {
        switch event {
        case .upstreamConnecting, .upstreamConnected, .upstreamStreamOpened, .upstreamConnectFailed, .localAnswerPrepared:
            return true
        default: return false
        }
    }

    /// The invariant and its text up to the first detail in parentheses or after a colon.
    static func key(_ problem: String) -> String {
        String(problem.prefix { $0 != "(" }.prefix(80))
    }

    static func line(_ event: Event, _ actions: [ExchangeAction]) -> String {
        let described = actions.map { String(describing: $0).replacingOccurrences(of: "ProxyCore.", with: "") }
        return "\(event) → [\(described.joined(separator: ", "))]"
    }
}

/// A world with its hash computed once (the memo looks each up and stores it).
struct Node: Hashable {
    let world: World
    let hash: Int

    init(_ world: World) {
        self.world = world
        hash = world.hashValue
    }

    static func == (lhs: Node, rhs: Node) -> Bool { lhs.hash == rhs.hash && lhs.world == rhs.world }
    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}

struct LateEvent: Hashable {
    let machine: ExchangeStateMachine
    let event: Event
}

/// A world and the actions of its last event, for `Explorer.plant`.
struct PlantedWorld {
    var world: World
    var lastActions: [ExchangeAction]
    var monitor: Monitor {
        get { world.monitor }
        set { world.monitor = newValue }
    }
}
