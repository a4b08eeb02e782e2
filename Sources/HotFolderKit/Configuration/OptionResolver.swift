import Foundation

/// The options one destination uses for one document.
public struct ResolvedOptions: Sendable, Equatable {
    public var format: FileFormat
    public var pages: PageSelection
    public var annotations: AnnotationOption
    public var copies: Int
    public var sides: String?
    /// A title or name a job ticket gave (already free of control characters).
    public var title: String?
    public var name: String?
    /// What sanitization changed and the log should say (e.g. a skipped summary).
    public var notes: [String] = []
}

/// Option sanitization (seed 000, adapted): each category's allowed options
/// are filtered by rules that depend on the document; a ticket picks among the
/// survivors, else the default does (formats: by the document's kind, the
/// others: the first survivor). A category left empty fails the job with the
/// category, the rule that emptied it and the fix. Every rule is listed in the
/// README's reference.
public enum OptionResolver {
    /// What the rules need to know about a document.
    public struct Document: Sendable {
        public var type: ContentType
        public var pages: Int
        public var annotations: Int
        /// The PDF's permissions forbid changing its annotations.
        public var annotationsLocked = false

        public init(type: ContentType, pages: Int, annotations: Int, annotationsLocked: Bool = false) {
            self.type = type
            self.pages = pages
            self.annotations = annotations
            self.annotationsLocked = annotationsLocked
        }

        var isImage: Bool { [.jpeg, .png, .tiff].contains(type) }
        /// A PDF, or an image the service turns into one.
        var convertible: Bool { type == .pdf || isImage }
    }

    public static func resolve(_ sharing: SharingConfiguration, document: Document, ticket: JobTicket.Choices? = nil) throws(JobFailure) -> ResolvedOptions {
        let kind = sharing.destination.rawValue
        let format = try resolveFormat(sharing, document: document, ticket: ticket?.format)
        var resolved = ResolvedOptions(format: format, pages: .all, annotations: .embed, copies: sharing.copies, sides: sharing.sides,
                                       title: ticket?.title, name: ticket?.name)
        if format != .original {
            resolved.pages = try resolvePages(sharing, document: document, format: format, ticket: ticket?.pages)
            resolved.annotations = try pick("\(kind).annotations", sharing.annotationOptions.map { ($0, annotationRule($0, sharing, document)) },
                                            ticket: ticket?.annotations,
                                            remedy: document.annotationsLocked ? "Allow embed in \(kind).annotations, or ask the author for a copy whose annotations may be changed." : "Allow it in \(kind).annotations, or change the ticket.")
            if resolved.annotations == .summary && document.annotations == 0 {
                // The seed's rule: a summary of nothing is no summary.
                resolved.annotations = .embed
                resolved.notes.append("the document has no annotations: no summary added (\(kind).annotations = summary goes as embed)")
            }
        }
        if let copies = ticket?.copies {
            guard sharing.destination == .print else { return resolved }
            guard copies <= sharing.copiesLimit else {
                throw JobFailure(.ticket, "the ticket asks for \(copies) copies; this folder allows at most \(sharing.copiesLimit)",
                                 remedy: "Ask for fewer copies, or raise print.max-copies for this folder.")
            }
            resolved.copies = copies
        }
        if let sides = ticket?.sides, sharing.destination == .print {
            guard sharing.sidesOptions.contains(sides) else {
                let allowed = sharing.sidesOptions.isEmpty ? "lets tickets choose no sides (print.sides is not set)" : "allows sides = \(sharing.sidesOptions.joined(separator: ", "))"
                throw JobFailure(.ticket, "the ticket asks for sides = \(sides); this folder \(allowed)",
                                 remedy: "Remove sides from the ticket, or list \(sides) in print.sides.")
            }
            resolved.sides = sides
        }
        return resolved
    }

    static func resolveFormat(_ sharing: SharingConfiguration, document: Document, ticket: FileFormat?) throws(JobFailure) -> FileFormat {
        let key = "\(sharing.destination.rawValue).format"
        let candidates: [(FileFormat, String?)] = sharing.fileFormats.map { format in
            if format != .original && !document.convertible {
                return (format, "\(key) = \(format.rawValue) needs a PDF or an image (JPEG, PNG, TIFF), and the document is \(document.type.phrase)")
            }
            return (format, nil)
        }
        if ticket == nil {
            let surviving = candidates.filter { $0.1 == nil }.map(\.0)
            // The seed's defaults depend on the document, not on the list's order.
            if document.isImage && surviving.contains(.image) { return .image }
            if document.type != .pdf && surviving.contains(.original) { return .original }
            if surviving.contains(.pdf) { return .pdf }
        }
        let remedy = document.convertible ? "Allow another format in \(key)." : "Save or export the document as PDF and drop the PDF, or allow original in \(key)."
        return try pick(key, candidates, ticket: ticket, remedy: remedy)
    }

    /// The document source's rule (seed 002): a PDF whose permissions forbid
    /// changing annotations keeps them as they are. Printing them is no change.
    static func annotationRule(_ option: AnnotationOption, _ sharing: SharingConfiguration, _ document: Document) -> String? {
        guard document.annotationsLocked, document.annotations > 0 else { return nil }
        switch option {
        case .embed: return nil
        case .flattenForPrint where sharing.destination == .print: return nil
        default: return "\(sharing.destination.rawValue).annotations = \(option.rawValue) would change the annotations, and the PDF's permissions forbid changing them"
        }
    }

    static func resolvePages(_ sharing: SharingConfiguration, document: Document, format: FileFormat, ticket: PageSelection?) throws(JobFailure) -> PageSelection {
        let key = "\(sharing.destination.rawValue).pages"
        func rule(_ selection: PageSelection) -> String? {
            if document.pages == 1 { return nil } // a single page is always `all`
            switch selection {
            case .range:
                return "\(key) = range takes its pages from a job ticket, and none gave a range"
            case .all, .annotated:
                if format == .image && document.pages > sharing.imageMaxPages {
                    return "\(key) = \(selection) would make \(document.pages) images, more than \(sharing.destination.rawValue).image.max-pages = \(sharing.imageMaxPages)"
                }
                if selection == .annotated && document.annotations == 0 {
                    return "\(key) = annotated, but no page of this document carries annotations"
                }
            case .ranges:
                if selection.pageIndexes(pageCount: document.pages, annotatedPages: { [] }).isEmpty {
                    return "\(key) = \(selection) selects no page of this \(document.pages)-page document"
                }
            case .first, .last:
                break
            }
            return nil
        }
        var candidates = sharing.pageSelections.map { ($0, rule($0)) }
        if let ticket, case .ranges = ticket, !sharing.pageSelections.contains(ticket), sharing.pageSelections.contains(.range) {
            // `range` lets a ticket give any range; the rules still apply to it.
            candidates.append((ticket, rule(ticket)))
        }
        let selection = try pick(key, candidates, ticket: ticket, remedy: "Allow another page selection in \(key) (for example: annotated, all).")
        return document.pages == 1 ? .all : selection
    }

    /// The ticket's choice when allowed and not removed, else the first survivor.
    static func pick<T: Equatable & CustomStringConvertibleOption>(_ key: String, _ candidates: [(T, String?)], ticket: T?, remedy: String) throws(JobFailure) -> T {
        if let ticket {
            guard let entry = candidates.first(where: { $0.0 == ticket }) else {
                throw JobFailure(.ticket, "the ticket asks for \(ticket.optionName), which \(key) does not allow (allowed: \(candidates.map(\.0.optionName).joined(separator: ", ")))",
                                 remedy: "Ask for an allowed option in the ticket, or allow \(ticket.optionName) in \(key).")
            }
            if let why = entry.1 {
                throw JobFailure(.ticket, "the ticket asks for \(ticket.optionName), but \(why)", remedy: remedy)
            }
            return ticket
        }
        if let first = candidates.first(where: { $0.1 == nil }) { return first.0 }
        let reasons = candidates.compactMap(\.1)
        throw JobFailure(.options, "no option of \(key) applies to this document: " + reasons.joined(separator: "; "), remedy: remedy)
    }

    /// Problems that would fail every document (for `hotfolder check`): the
    /// rules run against documents of every kind, and a destination for which
    /// each fails is reported.
    public static func emptyForEveryDocument(_ sharing: SharingConfiguration, folder: FolderConfiguration) -> [String] {
        let kinds: [Document] = [
            Document(type: .pdf, pages: 1, annotations: 0), Document(type: .pdf, pages: 3, annotations: 2),
            Document(type: .pdf, pages: 500, annotations: 40), Document(type: .jpeg, pages: 1, annotations: 0),
            Document(type: .zip, pages: 0, annotations: 0),
        ]
        var failures: [String] = []
        for document in kinds {
            do {
                _ = try resolve(sharing, document: document)
                return []
            } catch {
                failures.append(error.reason)
            }
        }
        var unique: [String] = []
        for f in failures where !unique.contains(f) { unique.append(f) }
        return ["no document could be \(sharing.destination == .export ? "exported" : "printed"): " + unique.joined(separator: "; ")]
    }
}

/// How an option is named in messages.
protocol CustomStringConvertibleOption {
    var optionName: String { get }
}

extension FileFormat: CustomStringConvertibleOption { var optionName: String { rawValue } }
extension AnnotationOption: CustomStringConvertibleOption { var optionName: String { rawValue } }
extension PageSelection: CustomStringConvertibleOption { var optionName: String { description } }
