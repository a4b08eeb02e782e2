// Fuzz target: the job-ticket parser (`JobTicket.parse`) and what the option
// resolver does with a parsed ticket. Any text must come back as a ticket or as
// problems, each on a line of the input, never as a crash; a ticket's names
// and titles carry no control characters; the resolver answers every ticket
// with options the folder allows or with a failure that says why.
import FuzzSupport
import HotFolderKit

@main
enum TicketFuzz {
    static func main() { fuzzMain(LLVMFuzzerTestOneInput) }
}

/// A folder that allows several options in each category, so tickets have something to pick.
let sharing: SharingConfiguration = {
    var s = SharingConfiguration(destination: .print)
    s.fileFormats = [.pdf, .original]
    s.pageSelections = [.all, .first, .range]
    s.annotationOptions = [.flattenForPrint, .summary, .embed]
    s.sidesOptions = ["one-sided", "two-sided-long-edge"]
    s.maxCopies = 5
    return s
}()

let documents = [
    OptionResolver.Document(type: .pdf, pages: 1, annotations: 0),
    OptionResolver.Document(type: .pdf, pages: 12, annotations: 4),
    OptionResolver.Document(type: .jpeg, pages: 1, annotations: 0),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = text(data, size)
    let lines = maxLines(input)
    switch JobTicket.parse(input, file: "document.pdf.ticket") {
    case .failure(let problems):
        check(!problems.messages.isEmpty, "rejected without a problem")
        for message in problems.messages {
            guard message.hasPrefix("line "), let number = Int(message.dropFirst(5).prefix { $0.isNumber }) else {
                check(false, "problem without a line: \(message)")
                continue
            }
            check((1...lines).contains(number), "problem on line \(number) of \(lines)")
        }
    case .success(let ticket):
        for destination in DestinationKind.allCases {
            let choices = ticket.choices(for: destination)
            for text in [choices.name, choices.title].compactMap({ $0 }) {
                check(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character kept in \"\(text)\"")
                check(text.count <= 1000, "unbounded text of \(text.count) characters")
            }
        }
        for document in documents {
            do {
                let options = try OptionResolver.resolve(sharing, document: document, ticket: ticket.choices(for: .print))
                check(sharing.fileFormats.contains(options.format), "format \(options.format) not allowed")
                check(options.annotations == .embed || sharing.annotationOptions.contains(options.annotations), "annotations \(options.annotations) not allowed")
                check((1...sharing.copiesLimit).contains(options.copies), "copies \(options.copies) beyond the limit")
                check(options.sides.map(sharing.sidesOptions.contains) ?? true, "sides \(options.sides ?? "") not allowed")
            } catch {
                check(!error.reason.isEmpty && !error.remedy.isEmpty, "a failure without reason or remedy")
            }
        }
    }
    return 0
}
