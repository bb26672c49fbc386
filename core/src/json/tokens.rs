//! The checkpoint form of a [`JsonValue`]: a flat list of tokens (containers announce their
//! length), so that a binary format such as bincode holds any value compactly and a decoder
//! rebuilds it without recursion. Not JSON: [`Natural`](super::Natural) writes JSON. Used through
//! [`Tokens`] by the few checkpoint fields that hold values.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::value::{JavaDouble, JsonObject, JsonValue, MAX_DEPTH};

/// A value in its checkpoint form: `Tokens(&value)` serializes, `Tokens<JsonValue>`
/// deserializes (refusing a list that does not rebuild one value, or one nested deeper than
/// Jackson allows).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tokens<V>(pub(crate) V);

/// One token of a value's flat serde form: containers announce their length, object members
/// are a name token followed by the member's value.
#[derive(Serialize, Deserialize)]
pub(super) enum Token<S> {
    Null,
    Bool(bool),
    Long(i64),
    Double(u64),
    String(S),
    Array(usize),
    Object(usize),
    /// Last, so the tokens before it keep their numbers (checkpoints never hold one).
    BigInteger(S),
}

impl Serialize for Tokens<&JsonValue> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tokens: Vec<Token<&str>> = Vec::new();
        let mut pending: Vec<(Option<&str>, &JsonValue)> = alloc::vec![(None, self.0)];
        while let Some((name, value)) = pending.pop() {
            if let Some(name) = name {
                tokens.push(Token::String(name));
            }
            push_value(value, &mut tokens, &mut pending, |v| v);
        }
        tokens.serialize(serializer)
    }
}

/// The one token of a value that is not a container (`None` for an array or object).
pub(super) fn scalar_token(value: &JsonValue) -> Option<Token<&str>> {
    Some(match value {
        JsonValue::Null => Token::Null,
        JsonValue::Bool(b) => Token::Bool(*b),
        JsonValue::Long(n) => Token::Long(*n),
        JsonValue::Double(d) => Token::Double(d.get().to_bits()),
        JsonValue::BigInteger(digits) => Token::BigInteger(digits),
        JsonValue::String(s) => Token::String(s),
        JsonValue::Array(_) | JsonValue::Object(_) => return None,
    })
}

/// Writes one step of a value's pre-order walk: pushes `value`'s token (a scalar whole, a
/// container's length) onto `tokens`, and its items onto `pending` (reversed, so popping takes
/// them in order; object members with their names), each wrapped by `item` as the caller's
/// walk holds them.
pub(super) fn push_value<'v, T>(
    value: &'v JsonValue,
    tokens: &mut Vec<Token<&'v str>>,
    pending: &mut Vec<(Option<&'v str>, T)>,
    item: impl Fn(&'v JsonValue) -> T,
) {
    match value {
        JsonValue::Array(items) => {
            tokens.push(Token::Array(items.len()));
            pending.extend(items.iter().rev().map(|v| (None, item(v))));
        }
        JsonValue::Object(members) => {
            tokens.push(Token::Object(members.len()));
            pending.extend(
                members
                    .iter()
                    .rev()
                    .map(|(n, v)| (Some(n.as_str()), item(v))),
            );
        }
        scalar => tokens.extend(scalar_token(scalar)),
    }
}

impl<'de> Deserialize<'de> for Tokens<JsonValue> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tokens = Vec::<Token<String>>::deserialize(deserializer)?;
        from_tokens(tokens)
            .map(Tokens)
            .map_err(serde::de::Error::custom)
    }
}

/// A container being rebuilt: its items so far, how many remain, and (for objects) the name
/// waiting for its value.
enum Open {
    Array(Vec<JsonValue>, usize),
    Object(JsonObject, usize, Option<String>),
}

/// Rebuilds a value from its tokens with an explicit stack.
fn from_tokens(tokens: Vec<Token<String>>) -> Result<JsonValue, &'static str> {
    let mut stack: Vec<Open> = Vec::new();
    let mut tokens = tokens.into_iter();
    loop {
        let value = match close_if_complete(&mut stack) {
            Some(done) => done,
            None => {
                if let Some(Open::Object(_, _, name)) = stack.last_mut() {
                    match tokens.next() {
                        Some(Token::String(n)) => *name = Some(n),
                        _ => return Err("object member without a name"),
                    }
                }
                match tokens.next().ok_or("value tokens end early")? {
                    Token::Null => JsonValue::Null,
                    Token::Bool(b) => JsonValue::Bool(b),
                    Token::Long(n) => JsonValue::Long(n),
                    Token::Double(bits) => JsonValue::Double(JavaDouble::new(f64::from_bits(bits))),
                    Token::BigInteger(digits) => JsonValue::BigInteger(digits),
                    Token::String(s) => JsonValue::String(s),
                    Token::Array(_) | Token::Object(_) if stack.len() >= MAX_DEPTH => {
                        return Err("value nested deeper than 1000 levels");
                    }
                    Token::Array(len) => {
                        stack.push(Open::Array(Vec::new(), len));
                        continue;
                    }
                    Token::Object(len) => {
                        stack.push(Open::Object(JsonObject::new(), len, None));
                        continue;
                    }
                }
            }
        };
        match stack.last_mut() {
            None if tokens.next().is_none() => return Ok(value),
            None => return Err("trailing tokens after the value"),
            Some(Open::Array(items, remaining)) => {
                items.push(value);
                *remaining -= 1;
            }
            Some(Open::Object(members, remaining, name)) => {
                members.insert(name.take().ok_or("object member without a name")?, value);
                *remaining -= 1;
            }
        }
    }
}

/// Pops the innermost container if it has all its items, as a finished value.
fn close_if_complete(stack: &mut Vec<Open>) -> Option<JsonValue> {
    match stack.last() {
        Some(Open::Array(_, 0) | Open::Object(_, 0, _)) => match stack.pop()? {
            Open::Array(items, _) => Some(JsonValue::Array(items)),
            Open::Object(members, _, _) => Some(JsonValue::Object(members)),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn round_trip(value: &JsonValue) -> Result<JsonValue, bincode::error::DecodeError> {
        let bytes =
            bincode::serde::encode_to_vec(Tokens(value), bincode::config::standard()).unwrap();
        bincode::serde::decode_from_slice::<Tokens<JsonValue>, _>(
            &bytes,
            bincode::config::standard(),
        )
        .map(|(v, _)| v.0)
    }

    #[test]
    fn flat_form_round_trips_exactly() {
        let mut inner = JsonObject::new();
        inner.insert("z".into(), JsonValue::Array(vec![]));
        inner.insert("a".into(), JsonValue::Double(JavaDouble::new(-0.0)));
        let value = JsonValue::Array(vec![
            JsonValue::Null,
            JsonValue::Bool(true),
            JsonValue::Long(i64::MIN),
            JsonValue::Double(JavaDouble::new(f64::INFINITY)),
            JsonValue::String("\u{1F600}".into()),
            JsonValue::Object(inner),
            JsonValue::Object(JsonObject::new()),
        ]);
        assert_eq!(round_trip(&value).unwrap(), value);
        assert_eq!(round_trip(&JsonValue::Long(5)).unwrap(), JsonValue::Long(5));
    }

    #[test]
    fn deep_values_round_trip_and_forged_depth_is_refused() {
        let mut deep = JsonValue::Null;
        for _ in 0..MAX_DEPTH {
            deep = JsonValue::Array(vec![deep]);
        }
        assert_eq!(round_trip(&deep).unwrap(), deep);
        // A forged token list one level deeper than allowed, then 100,000 levels deeper.
        for depth in [MAX_DEPTH + 1, 100_000] {
            let mut tokens: Vec<Token<&str>> = (0..depth).map(|_| Token::Array(1)).collect();
            tokens.push(Token::Null);
            let bytes =
                bincode::serde::encode_to_vec(&tokens, bincode::config::standard()).unwrap();
            let decoded: Result<(Tokens<JsonValue>, usize), _> =
                bincode::serde::decode_from_slice(&bytes, bincode::config::standard());
            assert!(decoded.is_err(), "depth {depth}");
        }
    }

    #[test]
    fn malformed_token_lists_are_refused() {
        let cases: Vec<Vec<Token<&str>>> = vec![
            vec![],
            vec![Token::Array(2), Token::Null],
            vec![Token::Object(1), Token::Null, Token::Null],
            vec![Token::Null, Token::Null],
            vec![Token::Array(usize::MAX)],
        ];
        for tokens in cases {
            let bytes =
                bincode::serde::encode_to_vec(&tokens, bincode::config::standard()).unwrap();
            let decoded: Result<(Tokens<JsonValue>, usize), _> =
                bincode::serde::decode_from_slice(&bytes, bincode::config::standard());
            assert!(decoded.is_err());
        }
    }
}
