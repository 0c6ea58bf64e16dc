//! Parallel iterators over a `str` (rayon's `ParallelString`): its bytes,
//! its chars, and its pieces between separators.
//!
//! A `str`'s producers count bytes, an upper bound on their items (as a
//! `filter`'s count its base's items), and cut where the driver asks, moved
//! on to the next char boundary, or for the pieces between separators, to
//! the nearest separator. Each item is then in exactly one piece, and the
//! pieces in order give the sequential iterator's items in order.
//!
//! The separators and patterns are chars (rayon's are too): a char, an
//! array or slice of chars, or a predicate on chars ([`CharPattern`]).

use super::plumbing::Producer;
use super::sources::Iter;
use super::{Chain, Copied, FlatMapIter, Map, OptionIter, ParallelIterator};

/// The first char boundary at or after `index` (at most 3 bytes on).
fn boundary_from(text: &str, index: usize) -> usize {
    let index = index.min(text.len());
    (index..=text.len())
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(text.len())
}

// ---------------------------------------------------------------- chars

/// `text.par_char_indices()`: each char with its byte index, in order.
#[derive(Clone, Debug)]
pub struct CharIndices<'a> {
    text: &'a str,
}

/// The producer of [`CharIndices`]: a piece of the text and where it
/// starts in the whole.
#[derive(Debug)]
pub struct CharIndicesProducer<'a> {
    text: &'a str,
    start: usize,
}

/// The sequential iterator of a [`CharIndices`] piece.
#[derive(Clone, Debug)]
pub struct OffsetCharIndices<'a> {
    chars: std::str::CharIndices<'a>,
    start: usize,
}

impl Iterator for OffsetCharIndices<'_> {
    type Item = (usize, char);
    fn next(&mut self) -> Option<(usize, char)> {
        let (index, c) = self.chars.next()?;
        Some((self.start + index, c))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chars.size_hint()
    }
}

impl<'a> ParallelIterator for CharIndices<'a> {
    type Item = (usize, char);
    type Producer<'b>
        = CharIndicesProducer<'a>
    where
        Self: 'b;
    type Seq = OffsetCharIndices<'a>;
    fn producer(&mut self) -> CharIndicesProducer<'a> {
        CharIndicesProducer {
            text: self.text,
            start: 0,
        }
    }
    fn into_seq(self) -> Self::Seq {
        CharIndicesProducer {
            text: self.text,
            start: 0,
        }
        .into_iter()
    }
}

impl<'a> Producer for CharIndicesProducer<'a> {
    type Item = (usize, char);
    type IntoIter = OffsetCharIndices<'a>;
    fn len(&self) -> usize {
        self.text.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // On to the next boundary rather than back: a piece cut anywhere
        // after its start keeps at least its first char, so a driver that
        // folds a piece a chunk at a time always gets on.
        let at = boundary_from(self.text, index);
        let (left, right) = self.text.split_at(at);
        (
            CharIndicesProducer {
                text: left,
                start: self.start,
            },
            CharIndicesProducer {
                text: right,
                start: self.start + at,
            },
        )
    }
    fn into_iter(self) -> OffsetCharIndices<'a> {
        OffsetCharIndices {
            chars: self.text.char_indices(),
            start: self.start,
        }
    }
}

/// `text.par_chars()`: the chars, in order.
pub type Chars<'a> = Map<CharIndices<'a>, fn((usize, char)) -> char>;

/// `text.par_bytes()`: the bytes, in order (an indexed iterator).
pub type Bytes<'a> = Copied<Iter<'a, u8>>;

// ------------------------------------------- pieces between separators

/// What separates the pieces of [`ParallelString::par_split`], or what
/// [`ParallelString::par_matches`] looks for: a char, an array or slice of
/// chars (or a reference to an array), any of which matches, or a
/// predicate on chars. The forms rayon accepts; a `&str` is not one.
pub trait CharPattern: Sync + Send {
    /// Whether `c` is a separator.
    fn matches(&self, c: char) -> bool;

    /// The byte index and length of the first separator in `text`, char
    /// by char through [`matches`](CharPattern::matches) unless the pattern
    /// knows a faster search (a single char searches bytes, as `str::find`
    /// does).
    #[inline]
    fn find_in(&self, text: &str) -> Option<(usize, usize)> {
        text.char_indices()
            .find(|&(_, c)| self.matches(c))
            .map(|(at, c)| (at, c.len_utf8()))
    }

    /// As [`find_in`](CharPattern::find_in), the last separator in `text`.
    #[inline]
    fn rfind_in(&self, text: &str) -> Option<(usize, usize)> {
        text.char_indices()
            .rev()
            .find(|&(_, c)| self.matches(c))
            .map(|(at, c)| (at, c.len_utf8()))
    }
}

/// A single char: `str::find`'s byte search (a `memchr` for the char's
/// last byte), where the char-by-char way decoded every char of a line
/// (`par_lines` took 1.1x rayon's time: docs/PARALLEL.md, "Session 29").
impl CharPattern for char {
    #[inline]
    fn matches(&self, c: char) -> bool {
        *self == c
    }
    #[inline]
    fn find_in(&self, text: &str) -> Option<(usize, usize)> {
        text.find(*self).map(|at| (at, self.len_utf8()))
    }
    #[inline]
    fn rfind_in(&self, text: &str) -> Option<(usize, usize)> {
        text.rfind(*self).map(|at| (at, self.len_utf8()))
    }
}

/// `char::is_whitespace` as a pattern ([`ParallelString::par_split_whitespace`]):
/// a type of its own, so that the test is inlined into the search where a
/// function pointer is called once per char (1.6x rayon's time: docs/PARALLEL.md,
/// "Session 29").
#[derive(Clone, Copy, Debug, Default)]
pub struct Whitespace;

/// Searched a byte at a time while the text is ASCII, decoding only the
/// chars beyond it: the char-by-char search decodes every char, and its
/// loop, a chain of jumps, ran at 1.0x or 1.28x rayon's time as the build
/// happened to align it (docs/PARALLEL.md, "Session 30").
impl CharPattern for Whitespace {
    #[inline]
    fn matches(&self, c: char) -> bool {
        c.is_whitespace()
    }
    #[inline]
    fn find_in(&self, text: &str) -> Option<(usize, usize)> {
        let bytes = text.as_bytes();
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            if byte.is_ascii() {
                if ascii_is_whitespace(byte) {
                    return Some((at, 1));
                }
                at += 1;
            } else {
                // `at` is a char boundary: only whole chars were skipped.
                let c = text[at..].chars().next()?;
                if c.is_whitespace() {
                    return Some((at, c.len_utf8()));
                }
                at += c.len_utf8();
            }
        }
        None
    }
    #[inline]
    fn rfind_in(&self, text: &str) -> Option<(usize, usize)> {
        let bytes = text.as_bytes();
        let mut end = bytes.len();
        while end > 0 {
            let byte = bytes[end - 1];
            if byte.is_ascii() {
                if ascii_is_whitespace(byte) {
                    return Some((end - 1, 1));
                }
                end -= 1;
            } else {
                // `end` is a char boundary: only whole chars were skipped.
                let c = text[..end].chars().next_back()?;
                let start = end - c.len_utf8();
                if c.is_whitespace() {
                    return Some((start, c.len_utf8()));
                }
                end = start;
            }
        }
        None
    }
}

/// `char::is_whitespace` of an ASCII byte: the space and `\t`, `\n`,
/// `\x0B`, `\x0C`, `\r` (the vertical tab too, which
/// `u8::is_ascii_whitespace` leaves out).
#[inline]
fn ascii_is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t'..=b'\r')
}

/// `char::is_ascii_whitespace` as a pattern
/// ([`ParallelString::par_split_ascii_whitespace`]), searched byte by
/// byte: no byte of a multi-byte char is ASCII.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsciiWhitespace;

impl CharPattern for AsciiWhitespace {
    #[inline]
    fn matches(&self, c: char) -> bool {
        c.is_ascii_whitespace()
    }
    #[inline]
    fn find_in(&self, text: &str) -> Option<(usize, usize)> {
        text.bytes()
            .position(|b| b.is_ascii_whitespace())
            .map(|at| (at, 1))
    }
    #[inline]
    fn rfind_in(&self, text: &str) -> Option<(usize, usize)> {
        text.bytes()
            .rposition(|b| b.is_ascii_whitespace())
            .map(|at| (at, 1))
    }
}

impl<const N: usize> CharPattern for [char; N] {
    fn matches(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> CharPattern for &[char; N] {
    fn matches(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl CharPattern for &[char] {
    fn matches(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<F: Fn(char) -> bool + Sync + Send> CharPattern for F {
    fn matches(&self, c: char) -> bool {
        self(c)
    }
}

/// `text.par_split(separator)`: the pieces between separators, in order,
/// as `str::split` gives them (empty ones included); with `INCLUSIVE`
/// ([`SplitInclusive`]), each piece with the separator that ends it, as
/// `str::split_inclusive` gives them; with `NON_EMPTY`
/// ([`SplitWhitespace`]), the pieces that are not empty (a `filter` would
/// call its predicate through a function pointer, since the type names
/// it).
#[derive(Clone, Debug)]
pub struct Split<'a, P, const INCLUSIVE: bool = false, const NON_EMPTY: bool = false> {
    /// `None`: no piece at all, where `Some("")` has one empty piece
    /// (none when `INCLUSIVE`).
    text: Option<&'a str>,
    separator: P,
}

/// `text.par_split_inclusive(separator)`: the pieces each ended by its
/// separator, the last one by the end of the text if no separator ends
/// it.
pub type SplitInclusive<'a, P> = Split<'a, P, true>;

/// The producer of [`Split`]: a piece of the text that starts after a
/// separator (or at the start) and ends before one (after it, when
/// `INCLUSIVE`) or at the end, or nothing at all (`None`), which yields no
/// piece, not even an empty one.
#[derive(Debug)]
pub struct SplitProducer<'a, 'p, P, const INCLUSIVE: bool = false, const NON_EMPTY: bool = false> {
    text: Option<&'a str>,
    separator: &'p P,
}

/// The sequential iterator of a [`Split`] piece.
#[derive(Debug)]
pub struct SplitIter<'a, 'p, P, const INCLUSIVE: bool = false, const NON_EMPTY: bool = false> {
    rest: Option<&'a str>,
    separator: &'p P,
}

impl<'a, P: CharPattern, const INCLUSIVE: bool, const NON_EMPTY: bool> Iterator
    for SplitIter<'a, '_, P, INCLUSIVE, NON_EMPTY>
{
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        loop {
            let text = self.rest?;
            if INCLUSIVE && text.is_empty() {
                // What follows a last separator: no piece.
                self.rest = None;
                return None;
            }
            let piece = match self.separator.find_in(text) {
                Some((at, len)) => {
                    let after = at + len;
                    self.rest = Some(&text[after..]);
                    &text[..if INCLUSIVE { after } else { at }]
                }
                None => {
                    self.rest = None;
                    text
                }
            };
            if !(NON_EMPTY && piece.is_empty()) {
                return Some(piece);
            }
        }
    }
}

/// The sequential iterator of a whole [`Split`], when it runs
/// sequentially (where a `flat_map`'s inner iterator folds whole).
#[derive(Debug)]
pub struct SplitSeq<'a, P, const INCLUSIVE: bool = false, const NON_EMPTY: bool = false> {
    rest: Option<&'a str>,
    separator: P,
}

impl<'a, P: CharPattern, const INCLUSIVE: bool, const NON_EMPTY: bool> Iterator
    for SplitSeq<'a, P, INCLUSIVE, NON_EMPTY>
{
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let mut piece = SplitIter::<P, INCLUSIVE, NON_EMPTY> {
            rest: self.rest,
            separator: &self.separator,
        };
        let next = piece.next();
        self.rest = piece.rest;
        next
    }
}

impl<'a, P: CharPattern, const INCLUSIVE: bool, const NON_EMPTY: bool> ParallelIterator
    for Split<'a, P, INCLUSIVE, NON_EMPTY>
{
    type Item = &'a str;
    type Producer<'b>
        = SplitProducer<'a, 'b, P, INCLUSIVE, NON_EMPTY>
    where
        Self: 'b;
    type Seq = SplitSeq<'a, P, INCLUSIVE, NON_EMPTY>;
    fn producer(&mut self) -> SplitProducer<'a, '_, P, INCLUSIVE, NON_EMPTY> {
        SplitProducer {
            text: self.text,
            separator: &self.separator,
        }
    }
    fn into_seq(self) -> Self::Seq {
        SplitSeq {
            rest: self.text,
            separator: self.separator,
        }
    }
}

impl<'a, 'p, P: CharPattern, const INCLUSIVE: bool, const NON_EMPTY: bool> Producer
    for SplitProducer<'a, 'p, P, INCLUSIVE, NON_EMPTY>
{
    type Item = &'a str;
    type IntoIter = SplitIter<'a, 'p, P, INCLUSIVE, NON_EMPTY>;
    fn len(&self) -> usize {
        self.text.map_or(0, str::len)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let separator = self.separator;
        let nothing = SplitProducer {
            text: None,
            separator,
        };
        let Some(text) = self.text else {
            return (self, nothing);
        };
        // The separator nearest after the cut, else the nearest before;
        // it belongs to neither side, or to the left one when
        // `INCLUSIVE`. With none, the text is one piece.
        let at = boundary_from(text, index);
        let found = separator
            .find_in(&text[at..])
            .map(|(offset, len)| (at + offset, len))
            .or_else(|| separator.rfind_in(&text[..at]));
        match found {
            Some((cut, len)) => {
                let right = cut + len;
                let left = if INCLUSIVE { right } else { cut };
                (
                    SplitProducer {
                        text: Some(&text[..left]),
                        separator,
                    },
                    SplitProducer {
                        text: Some(&text[right..]),
                        separator,
                    },
                )
            }
            None => (self, nothing),
        }
    }
    fn into_iter(self) -> Self::IntoIter {
        SplitIter {
            rest: self.text,
            separator: self.separator,
        }
    }
}

// ------------------------------------------------------------ matches

/// A borrowed [`CharPattern`]: what a piece of [`MatchIndices`] holds, so
/// that every piece shares the caller's pattern.
#[derive(Debug)]
pub struct PatternRef<'p, P>(&'p P);

impl<P: CharPattern> CharPattern for PatternRef<'_, P> {
    #[inline]
    fn matches(&self, c: char) -> bool {
        self.0.matches(c)
    }
    #[inline]
    fn find_in(&self, text: &str) -> Option<(usize, usize)> {
        self.0.find_in(text)
    }
    #[inline]
    fn rfind_in(&self, text: &str) -> Option<(usize, usize)> {
        self.0.rfind_in(text)
    }
}

/// `text.par_match_indices(pattern)`: each char that matches, as a
/// `&str`, with its byte index, in order.
#[derive(Clone, Debug)]
pub struct MatchIndices<'a, P> {
    text: &'a str,
    pattern: P,
}

/// `text.par_matches(pattern)`: each char that matches, as a `&str`, in
/// order.
pub type Matches<'a, P> = Map<MatchIndices<'a, P>, fn((usize, &'a str)) -> &'a str>;

/// The producer of [`MatchIndices`]: a piece of the text cut at char
/// boundaries, as [`CharIndices`]' pieces are.
#[derive(Debug)]
pub struct MatchIndicesProducer<'a, 'p, P> {
    base: CharIndicesProducer<'a>,
    pattern: &'p P,
}

/// The sequential iterator over the matches in a piece of text (`Q`, the
/// pattern, borrowed or owned) that starts at byte `start` of the whole,
/// found by the pattern's own search ([`CharPattern::find_in`]).
#[derive(Debug)]
pub struct MatchIndicesIter<'a, Q> {
    text: &'a str,
    start: usize,
    /// Where in `text` the search goes on.
    at: usize,
    pattern: Q,
}

impl<'a, Q> MatchIndicesIter<'a, Q> {
    fn new(text: &'a str, start: usize, pattern: Q) -> Self {
        MatchIndicesIter {
            text,
            start,
            at: 0,
            pattern,
        }
    }
}

impl<'a, Q: CharPattern> Iterator for MatchIndicesIter<'a, Q> {
    type Item = (usize, &'a str);
    fn next(&mut self) -> Option<(usize, &'a str)> {
        let (offset, len) = self.pattern.find_in(&self.text[self.at..])?;
        let found = self.at + offset;
        self.at = found + len;
        Some((self.start + found, &self.text[found..self.at]))
    }
}

impl<'a, P: CharPattern> ParallelIterator for MatchIndices<'a, P> {
    type Item = (usize, &'a str);
    type Producer<'b>
        = MatchIndicesProducer<'a, 'b, P>
    where
        Self: 'b;
    type Seq = MatchIndicesIter<'a, P>;
    fn producer(&mut self) -> MatchIndicesProducer<'a, '_, P> {
        MatchIndicesProducer {
            base: CharIndices { text: self.text }.producer(),
            pattern: &self.pattern,
        }
    }
    fn into_seq(self) -> Self::Seq {
        MatchIndicesIter::new(self.text, 0, self.pattern)
    }
}

impl<'a, 'p, P: CharPattern> Producer for MatchIndicesProducer<'a, 'p, P> {
    type Item = (usize, &'a str);
    type IntoIter = MatchIndicesIter<'a, PatternRef<'p, P>>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        let pattern = self.pattern;
        (
            MatchIndicesProducer {
                base: left,
                pattern,
            },
            MatchIndicesProducer {
                base: right,
                pattern,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        MatchIndicesIter::new(self.base.text, self.base.start, PatternRef(self.pattern))
    }
}

fn matched((_, piece): (usize, &str)) -> &str {
    piece
}

// ------------------------------------------------------------- UTF-16

/// The UTF-16 code units of one char: one, or the two of a surrogate
/// pair.
pub type Utf16Units = std::iter::Take<std::array::IntoIter<u16, 2>>;

/// `text.par_encode_utf16()`: the text's UTF-16 code units, in order, as
/// `str::encode_utf16` gives them. The two units of a surrogate pair are
/// two items, always in the same piece.
pub type EncodeUtf16<'a> = FlatMapIter<Chars<'a>, fn(char) -> Utf16Units>;

fn utf16_units(c: char) -> Utf16Units {
    let mut units = [0; 2];
    let len = c.encode_utf16(&mut units).len();
    units.into_iter().take(len)
}

/// `text.par_split_whitespace()`: the non-empty pieces between runs of
/// whitespace.
pub type SplitWhitespace<'a> = Split<'a, Whitespace, false, true>;

/// `text.par_split_ascii_whitespace()`: the non-empty pieces between runs
/// of ASCII whitespace.
pub type SplitAsciiWhitespace<'a> = Split<'a, AsciiWhitespace, false, true>;

/// `text.par_lines()`: the lines, without their `\n` or `\r\n`, as
/// `str::lines` gives them.
pub type Lines<'a> = Chain<Map<Split<'a, char>, fn(&'a str) -> &'a str>, OptionIter<&'a str>>;

fn without_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// Parallel iterators over a `str` (rayon's `ParallelString`), with the
/// items of `str`'s own iterators of the same names, in the same order.
///
/// ```
/// use weft::prelude::*;
/// let text = "fork join\nsteal park\n";
/// assert_eq!(text.par_lines().collect::<Vec<_>>(), ["fork join", "steal park"]);
/// assert_eq!(text.par_split_whitespace().count(), 4);
/// assert_eq!(text.par_chars().filter(|c| *c == 'o').count(), 2);
/// assert_eq!(text.par_split('\n').collect::<Vec<_>>(), ["fork join", "steal park", ""]);
/// ```
pub trait ParallelString {
    /// The text.
    fn as_parallel_string(&self) -> &str;

    /// The chars (`str::chars`).
    fn par_chars(&self) -> Chars<'_> {
        self.par_char_indices().map(|(_, c)| c)
    }

    /// The chars with their byte index (`str::char_indices`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<(usize, char)> = "aé!".par_char_indices().collect();
    /// assert_eq!(v, [(0, 'a'), (1, 'é'), (3, '!')]);
    /// ```
    fn par_char_indices(&self) -> CharIndices<'_> {
        CharIndices {
            text: self.as_parallel_string(),
        }
    }

    /// The bytes (`str::bytes`), as an indexed iterator.
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert_eq!("abc".par_bytes().map(u32::from).sum::<u32>(), 294);
    /// ```
    fn par_bytes(&self) -> Bytes<'_> {
        Iter {
            slice: self.as_parallel_string().as_bytes(),
        }
        .copied()
    }

    /// The pieces between separators (`str::split`), empty ones included:
    /// `separator` is a char, chars in an array or slice, or a predicate.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<&str> = "a,b;;c".par_split([',', ';']).collect();
    /// assert_eq!(v, ["a", "b", "", "c"]);
    /// ```
    fn par_split<P: CharPattern>(&self, separator: P) -> Split<'_, P> {
        Split {
            text: Some(self.as_parallel_string()),
            separator,
        }
    }

    /// The pieces each ended by a separator, the separator kept as the
    /// piece's last char (`str::split_inclusive`): no empty piece after a
    /// last separator at the very end, and none at all in an empty text.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<&str> = "one\ntwo\nthree".par_split_inclusive('\n').collect();
    /// assert_eq!(v, ["one\n", "two\n", "three"]);
    /// ```
    fn par_split_inclusive<P: CharPattern>(&self, separator: P) -> SplitInclusive<'_, P> {
        Split {
            text: Some(self.as_parallel_string()),
            separator,
        }
    }

    /// The pieces each ended by a separator (`str::split_terminator`): as
    /// [`par_split`](Self::par_split), without the empty piece after a
    /// last separator at the very end.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<&str> = "a.b.".par_split_terminator('.').collect();
    /// assert_eq!(v, ["a", "b"]);
    /// ```
    fn par_split_terminator<P: CharPattern>(&self, terminator: P) -> Split<'_, P> {
        let text = self.as_parallel_string();
        // Without its last char when that is a terminator: what is left
        // splits into the same pieces, less the empty one at the end. An
        // empty text has no piece at all.
        let text = match text.chars().next_back() {
            None => None,
            Some(last) if terminator.matches(last) => Some(&text[..text.len() - last.len_utf8()]),
            Some(_) => Some(text),
        };
        Split {
            text,
            separator: terminator,
        }
    }

    /// The lines (`str::lines`): the pieces ended by `\n`, each without
    /// a `\r` before that `\n`, and the last line, if the text does not
    /// end with `\n`, as it is.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<&str> = "a\r\n\nb".par_lines().collect();
    /// assert_eq!(v, ["a", "", "b"]);
    /// ```
    fn par_lines(&self) -> Lines<'_> {
        let text = self.as_parallel_string();
        // The lines that a `\n` ends lie before the last one.
        let (ended, last) = match text.rfind('\n') {
            Some(at) => (Some(&text[..at]), &text[at + 1..]),
            None => (None, text),
        };
        let ended = Split {
            text: ended,
            separator: '\n',
        };
        ended
            .map(without_cr as fn(&str) -> &str)
            .chain(OptionIter::new((!last.is_empty()).then_some(last)))
    }

    /// Each char that matches `pattern`, as a one-char `&str`
    /// (`str::matches` with a char pattern): a char, chars in an array or
    /// slice, or a predicate.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let digits: String = "a1b22c333".par_matches(|c: char| c.is_ascii_digit()).collect();
    /// assert_eq!(digits, "122333");
    /// ```
    fn par_matches<P: CharPattern>(&self, pattern: P) -> Matches<'_, P> {
        self.par_match_indices(pattern)
            .map(matched as fn((usize, &str)) -> &str)
    }

    /// Each char that matches `pattern`, as a one-char `&str`, with its
    /// byte index (`str::match_indices` with a char pattern).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<(usize, &str)> = "é,b,".par_match_indices(',').collect();
    /// assert_eq!(v, [(2, ","), (4, ",")]);
    /// ```
    fn par_match_indices<P: CharPattern>(&self, pattern: P) -> MatchIndices<'_, P> {
        MatchIndices {
            text: self.as_parallel_string(),
            pattern,
        }
    }

    /// The text's UTF-16 code units (`str::encode_utf16`); the two units
    /// of a char beyond U+FFFF come one after the other, from one piece.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let units: Vec<u16> = "a𝄞".par_encode_utf16().collect();
    /// assert_eq!(units, [0x61, 0xD834, 0xDD1E]);
    /// ```
    fn par_encode_utf16(&self) -> EncodeUtf16<'_> {
        self.par_chars()
            .flat_map_iter(utf16_units as fn(char) -> Utf16Units)
    }

    /// The non-empty pieces between runs of whitespace
    /// (`str::split_whitespace`).
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        Split {
            text: Some(self.as_parallel_string()),
            separator: Whitespace,
        }
    }

    /// The non-empty pieces between runs of ASCII whitespace
    /// (`str::split_ascii_whitespace`).
    fn par_split_ascii_whitespace(&self) -> SplitAsciiWhitespace<'_> {
        Split {
            text: Some(self.as_parallel_string()),
            separator: AsciiWhitespace,
        }
    }
}

impl ParallelString for str {
    fn as_parallel_string(&self) -> &str {
        self
    }
}
