//! Parallel iterators over a `str` (rayon's `ParallelString`): its bytes,
//! its chars, and its pieces between separators.
//!
//! A `str`'s producers count bytes, an upper bound on their items (as a
//! `filter`'s count its base's items), and cut where the driver asks, moved
//! on to the next char boundary, or for the pieces between separators, to
//! the nearest separator. Each item is then in exactly one piece, and the
//! pieces in order give the sequential iterator's items in order.

use super::plumbing::Producer;
use super::sources::Iter;
use super::{Chain, Copied, Filter, Map, OptionIter, ParallelIterator};

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

/// What separates the pieces of [`ParallelString::par_split`]: a char, an
/// array or slice of chars (any of them), or a predicate on chars.
pub trait CharPattern: Sync + Send {
    /// Whether `c` is a separator.
    fn matches(&self, c: char) -> bool;
}

impl CharPattern for char {
    fn matches(&self, c: char) -> bool {
        *self == c
    }
}

impl<const N: usize> CharPattern for [char; N] {
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
/// as `str::split` gives them (empty ones included).
#[derive(Clone, Debug)]
pub struct Split<'a, P> {
    /// `None`: no piece at all, where `Some("")` has one empty piece.
    text: Option<&'a str>,
    separator: P,
}

/// The producer of [`Split`]: a piece of the text that starts after a
/// separator (or at the start) and ends before one (or at the end), or
/// nothing at all (`None`), which yields no piece, not even an empty one.
#[derive(Debug)]
pub struct SplitProducer<'a, 'p, P> {
    text: Option<&'a str>,
    separator: &'p P,
}

/// The sequential iterator of a [`Split`] piece.
#[derive(Debug)]
pub struct SplitIter<'a, 'p, P> {
    rest: Option<&'a str>,
    separator: &'p P,
}

impl<'a, P: CharPattern> Iterator for SplitIter<'a, '_, P> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let text = self.rest?;
        let found = text
            .char_indices()
            .find(|&(_, c)| self.separator.matches(c));
        Some(match found {
            Some((at, c)) => {
                self.rest = Some(&text[at + c.len_utf8()..]);
                &text[..at]
            }
            None => {
                self.rest = None;
                text
            }
        })
    }
}

/// The sequential iterator of a whole [`Split`], when it runs
/// sequentially (as a `flat_map`'s inner iterator).
#[derive(Debug)]
pub struct SplitSeq<'a, P> {
    rest: Option<&'a str>,
    separator: P,
}

impl<'a, P: CharPattern> Iterator for SplitSeq<'a, P> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let mut piece = SplitIter {
            rest: self.rest,
            separator: &self.separator,
        };
        let next = piece.next();
        self.rest = piece.rest;
        next
    }
}

impl<'a, P: CharPattern> ParallelIterator for Split<'a, P> {
    type Item = &'a str;
    type Producer<'b>
        = SplitProducer<'a, 'b, P>
    where
        Self: 'b;
    type Seq = SplitSeq<'a, P>;
    fn producer(&mut self) -> SplitProducer<'a, '_, P> {
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

impl<'a, 'p, P: CharPattern> Producer for SplitProducer<'a, 'p, P> {
    type Item = &'a str;
    type IntoIter = SplitIter<'a, 'p, P>;
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
        // it belongs to neither side. With none, the text is one piece.
        let at = boundary_from(text, index);
        let is_separator = |&(_, c): &(usize, char)| separator.matches(c);
        let after = text[at..].char_indices().find(is_separator);
        let found = after
            .map(|(offset, c)| (at + offset, c))
            .or_else(|| text[..at].char_indices().rev().find(is_separator));
        match found {
            Some((cut, c)) => (
                SplitProducer {
                    text: Some(&text[..cut]),
                    separator,
                },
                SplitProducer {
                    text: Some(&text[cut + c.len_utf8()..]),
                    separator,
                },
            ),
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

/// `text.par_split_whitespace()`: the non-empty pieces between runs of
/// whitespace.
pub type SplitWhitespace<'a> = Filter<Split<'a, fn(char) -> bool>, fn(&&'a str) -> bool>;

/// `text.par_lines()`: the lines, without their `\n` or `\r\n`, as
/// `str::lines` gives them.
pub type Lines<'a> = Chain<Map<Split<'a, char>, fn(&'a str) -> &'a str>, OptionIter<&'a str>>;

fn is_whitespace(c: char) -> bool {
    c.is_whitespace()
}

fn is_ascii_whitespace(c: char) -> bool {
    c.is_ascii_whitespace()
}

fn not_empty(piece: &&str) -> bool {
    !piece.is_empty()
}

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

    /// The non-empty pieces between runs of whitespace
    /// (`str::split_whitespace`).
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        self.par_split(is_whitespace as fn(char) -> bool)
            .filter(not_empty as fn(&&str) -> bool)
    }

    /// The non-empty pieces between runs of ASCII whitespace
    /// (`str::split_ascii_whitespace`).
    fn par_split_ascii_whitespace(&self) -> SplitWhitespace<'_> {
        self.par_split(is_ascii_whitespace as fn(char) -> bool)
            .filter(not_empty as fn(&&str) -> bool)
    }
}

impl ParallelString for str {
    fn as_parallel_string(&self) -> &str {
        self
    }
}
