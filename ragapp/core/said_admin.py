"""The catalogue's words for access and accounts (``ragapp.core.said``): what a role may not do, and why an
administrator's change to the users was refused."""

from __future__ import annotations

# code: (English, Chinese)
ADMIN: dict[str, tuple[str, str]] = {
    # A role's limits (ragapp.core.access) and a knowledge base's rules (ragapp.engine.library, ragapp.engine.sync)
    "access.role": (
        "Your role ({role}) may not {action}; ask an administrator.",
        "你的角色（{role}）不能{action}；请联系管理员。",
    ),
    "access.kb_edit": (
        "You may not change the knowledge base {kb!r}; ask an administrator.",
        "你不能修改知识库 {kb!r}；请联系管理员。",
    ),
    # An administrator's change to the users (ragapp.accounts)
    "accounts.off": (
        "Accounts are off, so there are no users to manage: add an admin with `python -m ragapp.users add NAME "
        "--role admin`, then start the app with RAGAPP_AUTH__ENABLED=true.",
        "未启用账户，因此没有可管理的用户：请用 `python -m ragapp.users add NAME --role admin` 添加一位管理员，"
        "然后以 RAGAPP_AUTH__ENABLED=true 启动应用。",
    ),
    "accounts.no_sign_in": (
        "There is no sign-in {session!r} (it ended or expired); pick one from the list.",
        "没有登录会话 {session!r}（它已结束或过期）；请从列表中选择。",
    ),
    "accounts.no_sessions": (
        "Sign-ins are not kept here (the accounts were opened without them).",
        "这里不保存登录会话（账户打开时未启用它们）。",
    ),
    "accounts.no_user_pick": (
        "There is no user {name!r}; pick one from the list.",
        "没有用户 {name!r}；请从列表中选择。",
    ),
    "accounts.no_user": ("There is no user {name!r}.", "没有用户 {name!r}。"),
    "accounts.not_yourself": (
        "You may not {what} yourself: another admin must do it (so the app always keeps an admin).",
        "你不能{what}自己：必须由另一位管理员来做（这样应用始终保有一位管理员）。",
    ),
    "accounts.last_admin": (
        "{name} is the last admin; make another user admin first.",
        "{name} 是最后一位管理员；请先把另一位用户设为管理员。",
    ),
    "accounts.bad_name": (
        "{name!r} is not a valid user name: 1-64 letters, digits and . _ @ -, starting with a letter or digit.",
        "{name!r} 不是有效的用户名：1 到 64 个字母、数字及 . _ @ -，并以字母或数字开头。",
    ),
    "accounts.exists": (
        "There is already a user {name!r}; use passwd or remove first.",
        "已有用户 {name!r}；请先用 passwd 修改或删除它。",
    ),
    "accounts.external_password": (
        "{name} signs in with {source}; their password is kept there, not here.",
        "{name} 通过 {source} 登录；其密码保存在那里，而不在这里。",
    ),
    "accounts.unknown_role": (
        "Unknown role {role!r}: choose one of {roles}.",
        "未知的角色 {role!r}：请从 {roles} 中选择。",
    ),
    "accounts.short_password": (
        "A password needs at least {n} characters.",
        "密码至少需要 {n} 个字符。",
    ),
    # A test case that cannot be saved (ragapp.testcases.store)
    "test_case.no_question": (
        "The question is empty: type the question this test case should check.",
        "问题是空的：请输入这个测试用例要检查的问题。",
    ),
    "test_case.no_expected": (
        "No expected document: pick at least one document that should answer the question.",
        "没有应命中的文档：请至少选择一份应当回答这个问题的文档。",
    ),
}
# value name: {value: (English, Chinese)}
ADMIN_TERMS: dict[str, dict[str, tuple[str, str]]] = {
    # what a role may do (ragapp.core.access.Action's values)
    "action": {
        "chat": ("chat", "对话"),
        "read own traces": ("read own traces", "查看自己的追踪记录"),
        "manage own test cases": ("manage own test cases", "管理自己的测试用例"),
        "give feedback": ("give feedback", "提交反馈"),
        "upload documents": ("upload documents", "上传文档"),
        "delete documents": ("delete documents", "删除文档"),
        "move documents": ("move documents", "移动文档"),
        "edit the intent tree": ("edit the intent tree", "编辑意图树"),
        "manage users": ("manage users", "管理用户"),
        "read every trace": ("read every trace", "查看所有追踪记录"),
        "see the settings": ("see the settings", "查看设置"),
        "follow folders and git repositories": ("follow folders and git repositories", "跟踪文件夹和 git 仓库"),
        "read the audit log": ("read the audit log", "查看审计日志"),
    },
    # a user's role (ragapp.core.access.Role), as the Admin tab names it
    "role": {"reader": ("reader", "读者"), "editor": ("editor", "编辑"), "admin": ("admin", "管理员")},
    # what an admin may not do to themselves (ragapp.accounts.service)
    "what": {"demote": ("demote", "降级"), "remove": ("remove", "删除")},
}
