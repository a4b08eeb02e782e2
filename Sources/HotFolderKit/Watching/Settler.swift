import CSystem
import Dispatch
import Glibc

/// A file in a drop folder that has settled and may now be claimed.
public struct Candidate: Sendable, Hashable {
    public let directory: String
    public let name: String
    public var path: String { directory + "/" + name }
}

/// Decides when a file is complete: it counts once it was closed after writing
/// (or moved in, or found by a scan) and then stayed quiet — no further writes,
/// same size and mtime — for `settle` seconds.
public final class Settler: WatchSink, @unchecked Sendable {
    private struct Pending {
        var deadline: DispatchTime
        var size: Int64
        var mtime: Int64
    }

    public let settle: Double
    private let queue: DispatchQueue
    private let onReady: @Sendable (Candidate) -> Void
    private let onEvent: @Sendable (WatchEvent) -> Void
    private let onProblem: @Sendable (String) -> Void

    // Only touched on `queue`.
    private var pending: [Candidate: Pending] = [:]
    private var writing: Set<Candidate> = []
    private var timer: DispatchSourceTimer?
    private var armedFor: DispatchTime?

    public init(settle: Double, label: String,
                onReady: @escaping @Sendable (Candidate) -> Void,
                onEvent: @escaping @Sendable (WatchEvent) -> Void = { _ in },
                onProblem: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settle = settle
        self.queue = DispatchQueue(label: "settle.\(label)")
        self.onReady = onReady
        self.onEvent = onEvent
        self.onProblem = onProblem
    }

    public func receive(_ event: WatchEvent) {
        queue.async { self.apply(event) }
    }

    public func problem(_ message: String) { onProblem(message) }

    /// Files that were seen but are not yet handed on (tests, status).
    public var waitingCount: Int { queue.sync { pending.count + writing.count } }

    public func cancel() {
        queue.sync {
            timer?.cancel()
            timer = nil
            pending.removeAll()
            writing.removeAll()
        }
    }

    private func apply(_ event: WatchEvent) {
        switch event {
        case .written(let d, let n):
            let c = Candidate(directory: d, name: n)
            writing.remove(c)
            arm(c)
        case .modified(let d, let n):
            let c = Candidate(directory: d, name: n)
            if pending[c] != nil { arm(c) } else { writing.insert(c) }
        case .created(let d, let n):
            let c = Candidate(directory: d, name: n)
            var st = stat()
            if lstat(c.path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_nlink == 1 {
                writing.insert(c) // its writer's close will follow
            } else {
                arm(c) // a link, FIFO or device: nothing will be written to it
            }
        case .appeared(let d, let n):
            let c = Candidate(directory: d, name: n)
            if !writing.contains(c) && pending[c] == nil { arm(c) }
        case .removed(let d, let n):
            let c = Candidate(directory: d, name: n)
            pending[c] = nil
            writing.remove(c)
        case .overflow, .cannotWatch:
            // The close events the files being written wait for may never
            // come (lost, or no inotify any more): a quiet period (settle, at
            // least 0.5 s), the same size and mtime, and the writer check
            // decide for them now.
            for c in writing where pending[c] == nil { lookAgainLater(c) }
            writing.removeAll()
            scheduleTimer()
            let onEvent = self.onEvent
            DispatchQueue.global().async { onEvent(event) }
        case .folderGone:
            // Off this queue: the owner may cancel this settler in response.
            let onEvent = self.onEvent
            DispatchQueue.global().async { onEvent(event) }
        }
    }

    private func arm(_ c: Candidate) {
        if settle <= 0 && !Self.isOpenForWriting(c.path) {
            pending[c] = nil
            onReady(c)
            return
        }
        lookAgainLater(c)
        scheduleTimer()
    }

    /// `c` waits `quiet`, then counts if its size and mtime are still these.
    private func lookAgainLater(_ c: Candidate) {
        let (size, mtime) = Self.signature(c.path)
        pending[c] = Pending(deadline: .now() + quiet, size: size, mtime: mtime)
    }

    /// How soon a file that a writer still holds open is looked at again.
    static let writerRecheck = 0.5

    /// How long a file waits to be looked at again: settle, or with settle 0
    /// (where only a file a writer held open waits) `writerRecheck`.
    private var quiet: Double { settle > 0 ? settle : Self.writerRecheck }

    /// Whether a process (a copy still going, a file server's client) holds
    /// the file open for writing: then it is not complete, however quiet it
    /// has been (a writer may pause longer than settle; a file found by a
    /// scan comes with no close event to wait for). Where the kernel cannot
    /// tell (another user's file without CAP_LEASE, a network file system),
    /// settle alone decides.
    private static func isOpenForWriting(_ path: String) -> Bool {
        Poller.remoteFileSystem(at: path) == nil && hf_open_for_writing(path) == 1
    }

    private static func signature(_ path: String) -> (Int64, Int64) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return (-1, -1) }
        return (Int64(st.st_size), Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }

    private func scheduleTimer() {
        guard let earliest = pending.values.map(\.deadline).min() else {
            timer?.cancel()
            timer = nil
            armedFor = nil
            return
        }
        if let armedFor, armedFor <= earliest, timer != nil { return }
        timer?.cancel()
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: earliest, leeway: .milliseconds(2))
        t.setEventHandler { [weak self] in self?.fire() }
        t.resume()
        timer = t
        armedFor = earliest
    }

    private func fire() {
        timer?.cancel()
        timer = nil
        armedFor = nil
        let now = DispatchTime.now()
        for (c, p) in pending where p.deadline <= now {
            let (size, mtime) = Self.signature(c.path)
            if size < 0 {
                pending[c] = nil // gone before it settled
            } else if size != p.size || mtime != p.mtime {
                pending[c] = Pending(deadline: now + quiet, size: size, mtime: mtime)
            } else if Self.isOpenForWriting(c.path) {
                pending[c] = Pending(deadline: now + max(settle, Self.writerRecheck), size: size, mtime: mtime)
            } else {
                pending[c] = nil
                onReady(c)
            }
        }
        scheduleTimer()
    }
}
