//! Parallel walks of a tree that a function describes: [`walk_tree_prefix`]
//! (each node before its children), [`walk_tree_postfix`] (each node after
//! them) and [`walk_tree`] (any order). Their producers are cut by width,
//! as `split`'s (see `splitter.rs`): a cut first walks down while the piece
//! holds a single subtree, then gives the right piece the later half of
//! the subtrees the piece holds, or, when it holds no subtree left to walk,
//! the later half of the nodes already walked.

use super::plumbing::Producer;
use super::splitter::{cut_widths, WHOLE};
use super::ParallelIterator;

/// The nodes of the tree under `root`, each before its children, the
/// children in the order `children_of` gives them (a depth-first prefix
/// order): the order of `collect`, `find_first` and the other
/// order-sensitive consumers, whatever the pieces.
///
/// The walk splits where the driver asks (see `plumbing`): best on a wide
/// tree, which offers many subtrees to share out; a path-like tree is
/// walked mostly in one piece.
///
/// ```
/// use weft::prelude::*;
///
/// // 1 has children 2 and 3; each n < 8 has children 2n and 2n + 1.
/// let children = |&n: &u32| if n < 8 { vec![2 * n, 2 * n + 1] } else { vec![] };
/// let nodes: Vec<u32> = weft::iter::walk_tree_prefix(1, children).collect();
/// assert_eq!(nodes, [1, 2, 4, 8, 9, 5, 10, 11, 3, 6, 12, 13, 7, 14, 15]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children_of: B) -> WalkTreePrefix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    WalkTreePrefix {
        root: Some(root),
        children_of,
    }
}

/// The nodes of the tree under `root`, each after its children, the
/// children in the order `children_of` gives them (a depth-first postfix
/// order): the order of `collect` and the other order-sensitive
/// consumers.
///
/// ```
/// use weft::prelude::*;
///
/// let children = |&n: &u32| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] };
/// let nodes: Vec<u32> = weft::iter::walk_tree_postfix(1, children).collect();
/// assert_eq!(nodes, [4, 5, 2, 6, 7, 3, 1]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children_of: B) -> WalkTreePostfix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    WalkTreePostfix {
        root: Some(root),
        children_of,
    }
}

/// The nodes of the tree under `root`, in no promised order: for a loop
/// whose result does not depend on it (a sum, a `for_each`). Today it is
/// the prefix order of [`walk_tree_prefix`]; it may change.
///
/// ```
/// use weft::prelude::*;
///
/// let children = |&n: &u64| if n < 1_024 { vec![2 * n, 2 * n + 1] } else { vec![] };
/// let count = weft::iter::walk_tree(1, children).count();
/// assert_eq!(count, 2047);
/// ```
pub fn walk_tree<S, B, I>(root: S, children_of: B) -> WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    WalkTree(walk_tree_prefix(root, children_of))
}

/// The iterator of [`walk_tree_prefix`].
#[derive(Debug)]
pub struct WalkTreePrefix<S, B> {
    /// `None` once a consuming call took it.
    root: Option<S>,
    children_of: B,
}

/// The iterator of [`walk_tree_postfix`].
#[derive(Debug)]
pub struct WalkTreePostfix<S, B> {
    /// `None` once a consuming call took it.
    root: Option<S>,
    children_of: B,
}

/// The iterator of [`walk_tree`].
#[derive(Debug)]
pub struct WalkTree<S, B>(WalkTreePrefix<S, B>);

/// A piece of a tree walk: nodes already walked (`seen`), subtrees still to
/// walk (`subtrees`), and its width (see `splitter.rs`).
///
/// In prefix order `seen` comes first, in order, then `subtrees`, kept as
/// a stack (the next to walk last); in postfix order `subtrees` comes
/// first, in order, then `seen`, deepest first (`seen` is kept in walking
/// order, so reversed).
#[derive(Debug)]
pub struct WalkTreeProducer<'b, S, B, const PREFIX: bool> {
    seen: Vec<S>,
    subtrees: Vec<S>,
    width: usize,
    children_of: &'b B,
}

impl<'b, S, B, const PREFIX: bool> WalkTreeProducer<'b, S, B, PREFIX> {
    fn new(root: Option<S>, children_of: &'b B) -> Self {
        WalkTreeProducer {
            seen: Vec::new(),
            subtrees: root.into_iter().collect(),
            width: WHOLE,
            children_of,
        }
    }

    fn is_spent(&self) -> bool {
        self.seen.is_empty() && self.subtrees.is_empty()
    }

    fn piece(&self, seen: Vec<S>, subtrees: Vec<S>, width: usize) -> Self {
        WalkTreeProducer {
            seen,
            subtrees,
            width,
            children_of: self.children_of,
        }
    }

    /// Cuts off the later part of the piece, `width` wide, given that
    /// `self` walked down to more than one subtree or to none: the later
    /// half of the subtrees, or if none, of the nodes walked. `None` if
    /// there is nothing to share.
    fn cut_later(&mut self, width: usize) -> Option<Self> {
        if self.subtrees.len() > 1 {
            let half = self.subtrees.len() / 2;
            let later = if PREFIX {
                // A stack: the later subtrees are at the bottom.
                let rest = self.subtrees.split_off(half);
                std::mem::replace(&mut self.subtrees, rest)
            } else {
                self.subtrees.split_off(half)
            };
            // Postfix: the nodes walked come after every subtree.
            let seen = if PREFIX {
                Vec::new()
            } else {
                std::mem::take(&mut self.seen)
            };
            return Some(self.piece(seen, later, width));
        }
        if self.subtrees.is_empty() && self.seen.len() > 1 {
            let half = self.seen.len() / 2;
            let later = if PREFIX {
                self.seen.split_off(half)
            } else {
                // Reversed: the later ones are the first walked.
                let rest = self.seen.split_off(half);
                std::mem::replace(&mut self.seen, rest)
            };
            return Some(self.piece(later, Vec::new(), width));
        }
        None
    }
}

impl<S, B, const PREFIX: bool> WalkTreeProducer<'_, S, B, PREFIX> {
    /// How wide the piece looks to the driver (see `splitter.rs`).
    fn width(&self) -> usize {
        if self.is_spent() {
            0
        } else {
            self.width
        }
    }

    /// Cuts at `index` (see the module docs); `push_children` puts a
    /// node's children into the subtrees, in the order's way.
    fn cut(mut self, index: usize, push_children: impl Fn(&B, &S, &mut Vec<S>)) -> (Self, Self) {
        let Some((left, right)) = cut_widths(self.width, index).filter(|_| !self.is_spent()) else {
            // Nothing to cut, or a cut at an end: all on one side.
            let nothing = self.piece(Vec::new(), Vec::new(), 0);
            return if index == 0 {
                (nothing, self)
            } else {
                (self, nothing)
            };
        };
        // Down while there is a single subtree: its root is walked.
        while let [_] = self.subtrees[..] {
            let node = self.subtrees.pop().expect("one subtree");
            push_children(self.children_of, &node, &mut self.subtrees);
            self.seen.push(node);
        }
        match self.cut_later(right) {
            Some(later) => {
                self.width = left;
                (self, later)
            }
            None => {
                // Not to be cut again: folded whole.
                self.width = 1;
                let nothing = self.piece(Vec::new(), Vec::new(), 0);
                (self, nothing)
            }
        }
    }

    /// The piece's walk, with `children_of` (borrowed or owned).
    fn into_walk<Q, C>(self, children_of: Q) -> WalkIter<S, Q, C, PREFIX> {
        let (mut first, mut subtrees, mut last) = (self.seen, self.subtrees, Vec::new());
        if PREFIX {
            // The walked nodes come first, popped from the end.
            first.reverse();
        } else {
            // The subtrees first, popped from the end; then the walked
            // nodes, deepest (last) first.
            subtrees.reverse();
            last = std::mem::take(&mut first);
        }
        WalkIter {
            first,
            subtrees,
            pending: Vec::new(),
            last,
            children_of,
        }
    }
}

fn push_reversed<S, B, I>(children_of: &B, node: &S, stack: &mut Vec<S>)
where
    B: Fn(&S) -> I,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    stack.extend(children_of(node).into_iter().rev());
}

fn push_in_order<S, B, I>(children_of: &B, node: &S, subtrees: &mut Vec<S>)
where
    B: Fn(&S) -> I,
    I: IntoIterator<Item = S>,
{
    subtrees.extend(children_of(node));
}

impl<'b, S, B, I> Producer for WalkTreeProducer<'b, S, B, true>
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    type Item = S;
    type IntoIter = WalkIter<S, &'b B, I::IntoIter, true>;
    fn len(&self) -> usize {
        self.width()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        self.cut(index, push_reversed)
    }
    fn into_iter(self) -> Self::IntoIter {
        let children_of = self.children_of;
        self.into_walk(children_of)
    }
    fn folds_leaves_whole(&self) -> bool {
        // A leaf folded whole, as `split`'s (see splitter.rs).
        true
    }
}

impl<'b, S, B, I> Producer for WalkTreeProducer<'b, S, B, false>
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S>,
{
    type Item = S;
    type IntoIter = WalkIter<S, &'b B, I::IntoIter, false>;
    fn len(&self) -> usize {
        self.width()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        self.cut(index, push_in_order)
    }
    fn into_iter(self) -> Self::IntoIter {
        let children_of = self.children_of;
        self.into_walk(children_of)
    }
    fn folds_leaves_whole(&self) -> bool {
        // A leaf folded whole, as `split`'s (see splitter.rs).
        true
    }
}

/// The sequential walk of a piece of a tree: the nodes of `first` (popped
/// from the end), then the subtrees of `subtrees` (popped from the end),
/// then the nodes of `last` (popped from the end). A prefix walk keeps its
/// subtrees as a stack; a postfix walk keeps the nodes it is under in
/// `pending`, each with its children still to walk (`C`). `Q` is
/// `children_of`, borrowed by a producer's piece and owned by the whole
/// walk run sequentially.
#[derive(Debug)]
pub struct WalkIter<S, Q, C, const PREFIX: bool> {
    first: Vec<S>,
    subtrees: Vec<S>,
    pending: Vec<(S, C)>,
    last: Vec<S>,
    children_of: Q,
}

impl<S, Q, I> Iterator for WalkIter<S, Q, I::IntoIter, true>
where
    Q: Fn(&S) -> I,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    type Item = S;
    fn next(&mut self) -> Option<S> {
        if let Some(node) = self.first.pop() {
            return Some(node);
        }
        let node = self.subtrees.pop()?;
        push_reversed(&self.children_of, &node, &mut self.subtrees);
        Some(node)
    }
}

impl<S, Q, I> Iterator for WalkIter<S, Q, I::IntoIter, false>
where
    Q: Fn(&S) -> I,
    I: IntoIterator<Item = S>,
{
    type Item = S;
    fn next(&mut self) -> Option<S> {
        loop {
            if let Some((_, children)) = self.pending.last_mut() {
                match children.next() {
                    Some(child) => {
                        let grandchildren = (self.children_of)(&child).into_iter();
                        self.pending.push((child, grandchildren));
                    }
                    // Its children are walked: the node is next.
                    None => return self.pending.pop().map(|(node, _)| node),
                }
            } else if let Some(root) = self.subtrees.pop() {
                let children = (self.children_of)(&root).into_iter();
                self.pending.push((root, children));
            } else {
                return self.last.pop();
            }
        }
    }
}

/// `ParallelIterator` for a walk in order `$prefix`, `$iter`, whose
/// children iterators need `$bound`.
macro_rules! walk_iterator {
    ($iter:ident, $prefix:literal, $($bound:tt)*) => {
        impl<S, B, I> ParallelIterator for $iter<S, B>
        where
            S: Send,
            B: Fn(&S) -> I + Send + Sync,
            I: IntoIterator<Item = S, IntoIter: $($bound)*>,
        {
            type Item = S;
            type Producer<'a>
                = WalkTreeProducer<'a, S, B, $prefix>
            where
                Self: 'a;
            type Seq = WalkIter<S, B, I::IntoIter, $prefix>;
            fn producer(&mut self) -> Self::Producer<'_> {
                // The root moves into the producer: the consuming call
                // that asked drops the iterator after.
                WalkTreeProducer::new(self.root.take(), &self.children_of)
            }
            fn into_seq(self) -> Self::Seq {
                // The whole tree: one subtree, in either order.
                WalkIter {
                    first: Vec::new(),
                    subtrees: self.root.into_iter().collect(),
                    pending: Vec::new(),
                    last: Vec::new(),
                    children_of: self.children_of,
                }
            }
        }
    };
}

walk_iterator!(WalkTreePrefix, true, DoubleEndedIterator);
walk_iterator!(WalkTreePostfix, false, Iterator);

impl<S, B, I> ParallelIterator for WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    type Item = S;
    type Producer<'a>
        = WalkTreeProducer<'a, S, B, true>
    where
        Self: 'a;
    type Seq = WalkIter<S, B, I::IntoIter, true>;
    fn producer(&mut self) -> Self::Producer<'_> {
        self.0.producer()
    }
    fn into_seq(self) -> Self::Seq {
        self.0.into_seq()
    }
}
