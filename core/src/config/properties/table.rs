//! The table of configurations in a config checkpoint ([`ConfigTableRef`] written,
//! [`ConfigTable`] read): every distinct set of names once, then every configuration once with
//! the number of its names, so that the tables refer to configurations by number.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, SerializeTuple};
use serde::{Deserialize, Serialize};

use super::layout::Names;
use super::{decode_others, OthersRef, Properties, Values};
use crate::checkpoint::ByteString;
use crate::sync::Arc;

/// The configurations a checkpoint refers to, numbered as they are first met.
#[derive(Default)]
pub(crate) struct ConfigTableRef<'a> {
    names: Vec<&'a Names>,
    /// Names by their bytes: equal names are written once, whatever allocations hold them.
    name_numbers: BTreeMap<&'a [u8], u32>,
    configs: Vec<(u32, &'a Properties)>,
    /// Configurations by the address of their allocation.
    config_numbers: BTreeMap<usize, u32>,
}

impl<'a> ConfigTableRef<'a> {
    /// The number of `config` in the table, which holds it from now on.
    pub(crate) fn number(&mut self, config: &'a Properties) -> u32 {
        let next = self.configs.len() as u32;
        let number = *self.config_numbers.entry(config.address()).or_insert(next);
        if number == next {
            let names = &config.shared().names;
            let next_names = self.names.len() as u32;
            let names_number = *self
                .name_numbers
                .entry(names.as_bytes())
                .or_insert(next_names);
            if names_number == next_names {
                self.names.push(names);
            }
            self.configs.push((names_number, config));
        }
        number
    }
}

/// One configuration in the table: its names' number, its other values, its values' layout.
struct ConfigRef<'a>(u32, &'a Properties);

impl Serialize for ConfigRef<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut wire = serializer.serialize_tuple(3)?;
        wire.serialize_element(&self.0)?;
        wire.serialize_element(&OthersRef(
            self.1.shared().others.as_deref().unwrap_or_default(),
        ))?;
        wire.serialize_element(&ByteString(&self.1.values.slice))?;
        wire.end()
    }
}

impl Serialize for ConfigTableRef<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct AllNames<'n>(&'n [&'n Names]);
        impl Serialize for AllNames<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
                for names in self.0 {
                    seq.serialize_element(&ByteString(names.as_bytes()))?;
                }
                seq.end()
            }
        }
        struct AllConfigs<'c>(&'c [(u32, &'c Properties)]);
        impl Serialize for AllConfigs<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
                for (names, config) in self.0 {
                    seq.serialize_element(&ConfigRef(*names, config))?;
                }
                seq.end()
            }
        }
        let mut wire = serializer.serialize_tuple(2)?;
        wire.serialize_element(&AllNames(&self.names))?;
        wire.serialize_element(&AllConfigs(&self.configs))?;
        wire.end()
    }
}

/// The configurations of a checkpoint, by number, each with the names it shares.
pub(crate) struct ConfigTable(Vec<Properties>);

impl ConfigTable {
    /// The configurations, by number.
    pub(crate) fn into_configs(self) -> Vec<Properties> {
        self.0
    }
}

/// The first allocation a decoder makes, whatever length the input claims.
const FIRST_ALLOCATION: usize = 1 << 12;

impl<'de> Deserialize<'de> for ConfigTable {
    /// Checks every set of names once; refuses a names number beyond them.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Table;

        impl<'de> Visitor<'de> for Table {
            type Value = ConfigTable;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("names, then configurations")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ConfigTable, A::Error> {
                let missing = || serde::de::Error::custom("the configuration table is cut short");
                let names: Vec<ByteString<Arc<[u8]>>> = seq.next_element()?.ok_or_else(missing)?;
                let names = names
                    .into_iter()
                    .map(|bytes| Names::checked(bytes.0))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(serde::de::Error::custom)?;
                seq.next_element_seed(AllConfigs(&names))?
                    .map(ConfigTable)
                    .ok_or_else(missing)
            }
        }

        deserializer.deserialize_tuple(2, Table)
    }
}

/// The configurations of the table, given its names.
struct AllConfigs<'n>(&'n [Names]);

impl<'de> DeserializeSeed<'de> for AllConfigs<'_> {
    type Value = Vec<Properties>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for AllConfigs<'_> {
    type Value = Vec<Properties>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of configurations")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let claimed = seq.size_hint().unwrap_or(0);
        let mut configs = Vec::with_capacity(claimed.min(FIRST_ALLOCATION));
        while let Some(config) = seq.next_element_seed(OneConfig(self.0))? {
            configs.push(config);
        }
        Ok(configs)
    }
}

/// One configuration of the table: its names' number, its other values, its values' layout.
struct OneConfig<'n>(&'n [Names]);

impl<'de> DeserializeSeed<'de> for OneConfig<'_> {
    type Value = Properties;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Properties, D::Error> {
        deserializer.deserialize_tuple(3, self)
    }
}

impl<'de> Visitor<'de> for OneConfig<'_> {
    type Value = Properties;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a configuration: its names' number, other values and values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Properties, A::Error> {
        let missing = || serde::de::Error::custom("a configuration is cut short");
        let number: u32 = seq.next_element()?.ok_or_else(missing)?;
        let names = usize::try_from(number)
            .ok()
            .and_then(|n| self.0.get(n))
            .ok_or_else(|| serde::de::Error::custom("a names number beyond the table"))?;
        let others = decode_others(&mut seq)?.ok_or_else(missing)?;
        seq.next_element_seed(Values {
            names: names.clone(),
            others,
        })?
        .ok_or_else(missing)
    }
}
