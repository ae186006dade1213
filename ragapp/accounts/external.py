"""Users of a company sign-in (an OpenID Connect provider, an LDAP directory): the role their groups give them.

The provider or directory says who someone is and which groups they are in; ``auth.group_roles`` says what a
group may do here. A user gets the highest role any of their groups maps to, else ``auth.default_role`` (None:
refused). Their groups are kept too, so a knowledge-base rule naming ``group:NAME`` applies to them like to a
local user in that group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ragapp.core.access import ROLES, Role


def mapped_role(groups: Iterable[str], group_roles: Mapping[str, Role], default: Role | None) -> Role | None:
    """The highest role ``groups`` map to in ``group_roles``, else ``default``."""
    given = [group_roles[g] for g in groups if g in group_roles]
    return max(given, key=ROLES.index) if given else default
