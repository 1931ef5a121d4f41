//! Closed sets of kinds (policies, schedules, GPUs, trace formats, …) declared one row per
//! variant with [`kinds!`](crate::kinds!): the enum, its serde name, `ALL`, `id`, `label`,
//! `from_id`, `FromStr` and `Display` all come from the row, so a new kind is one row.

use alloc::string::String;
use core::fmt;

/// A string that names no kind of a set: what [`core::str::FromStr`] of a [`kinds!`](crate::kinds!)
/// enum returns. Its message names the set and lists every id it knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKind {
    /// What the set is, in words ("fairness policy").
    pub what: &'static str,
    /// The string given.
    pub got: String,
    /// Every id of the set, in display order.
    pub expected: &'static [&'static str],
}

impl UnknownKind {
    /// `got` is not one of `expected`, the ids of a set of `what`.
    #[must_use]
    pub fn new(what: &'static str, got: &str, expected: &'static [&'static str]) -> Self {
        UnknownKind {
            what,
            got: got.into(),
            expected,
        }
    }
}

impl fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}` (expected one of: {})",
            self.what,
            self.got,
            self.expected.join(", ")
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UnknownKind {}

/// What every [`kinds!`](crate::kinds!) enum is, for code generic over them (menus, command-line
/// parsers): the same `ALL`, `id`, `label` and `from_id` as its inherent items.
pub trait Kind: Copy + Sized + 'static {
    /// Every kind, in display order.
    fn all() -> &'static [Self];
    /// The id.
    fn id(self) -> &'static str;
    /// The display name.
    fn label(self) -> &'static str;
    /// The kind with this id, if any.
    fn from_id(id: &str) -> Option<Self>;
}

/// Declares a `Copy` enum of kinds from one row per variant:
///
/// ```
/// bubblelab_core::kinds! {
///     /// Fruit the example knows.
///     pub enum Fruit as "fruit" {
///         /// A pome.
///         Apple = "apple", "Apple (Malus)";
///         /// A berry; without a label, the label is the id.
///         Grape = "grape";
///     }
/// }
/// assert_eq!(Fruit::ALL, [Fruit::Apple, Fruit::Grape]);
/// assert_eq!(Fruit::Apple.id(), "apple");
/// assert_eq!(Fruit::Grape.label(), "grape");
/// assert_eq!("apple".parse::<Fruit>(), Ok(Fruit::Apple));
/// assert_eq!(Fruit::from_id("pear"), None);
/// assert_eq!(Fruit::Grape.to_string(), "grape");
/// assert_eq!(
///     "pear".parse::<Fruit>().unwrap_err().to_string(),
///     "unknown fruit `pear` (expected one of: apple, grape)"
/// );
/// ```
///
/// The enum derives `Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize,
/// Deserialize` (more derives, `#[default]` and docs go on the enum and rows as usual); each
/// variant's serde name is its id, so the id is what scenario JSON, share links, the CLI and
/// metric keys all read and write. `as "…"` names the set in parse errors.
#[macro_export]
macro_rules! kinds {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident as $what:literal {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $id:literal $(, $label:literal)?;
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash,
            ::serde::Serialize, ::serde::Deserialize,
        )]
        $vis enum $name {
            $(
                $(#[$vmeta])*
                #[serde(rename = $id)]
                $variant,
            )+
        }

        impl $name {
            /// Every kind, in display order.
            pub const ALL: [$name; [$($id),+].len()] = [$($name::$variant),+];

            /// Every id, in display order (for menus, `--help` and errors).
            pub const IDS: [&'static str; [$($id),+].len()] = [$($id),+];

            /// The id used in scenario JSON, share links, the CLI and metric keys.
            #[must_use]
            pub fn id(self) -> &'static str {
                match self {
                    $($name::$variant => $id,)+
                }
            }

            /// The display name.
            #[must_use]
            pub fn label(self) -> &'static str {
                match self {
                    $($name::$variant => $crate::kinds!(@label $id $(, $label)?),)+
                }
            }

            /// The kind with this id, if any.
            #[must_use]
            pub fn from_id(id: &str) -> Option<$name> {
                match id {
                    $($id => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl $crate::kinds::Kind for $name {
            fn all() -> &'static [Self] {
                &$name::ALL
            }
            fn id(self) -> &'static str {
                $name::id(self)
            }
            fn label(self) -> &'static str {
                $name::label(self)
            }
            fn from_id(id: &str) -> Option<Self> {
                $name::from_id(id)
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::kinds::UnknownKind;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::from_id(s)
                    .ok_or_else(|| $crate::kinds::UnknownKind::new($what, s, &$name::IDS))
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.id())
            }
        }
    };
    (@label $id:literal) => {
        $id
    };
    (@label $id:literal, $label:literal) => {
        $label
    };
}
