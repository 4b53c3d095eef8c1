"""A stand-in for Scrapy's stats collector: the calls components make, kept in a dict."""

from __future__ import annotations

from typing import Any


class DictStats(dict[str, Any]):
    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self[key] = self.get(key, start) + count

    def max_value(self, key: str, value: Any) -> None:
        self[key] = max(self.get(key, value), value)

    def set_value(self, key: str, value: Any) -> None:
        self[key] = value

    def get_value(self, key: str, default: Any = None) -> Any:
        return self.get(key, default)
