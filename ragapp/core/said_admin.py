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
    # A folder, git or website source refused as given, or asked for by a name that is not there (ragapp.sync)
    "source.bad_name": (
        "Source name {name!r} is not allowed: use 1 to 64 characters: letters, digits and - _ . (starting with a "
        "letter or digit), e.g. 'handbook'.",
        "同步源名称 {name!r} 不可用：请用 1 到 64 个字符，可以是字母、数字和 - _ .（以字母或数字开头），"
        "例如“handbook”。",
    ),
    "source.unknown_kind": (
        "Unknown kind {kind!r}: a source is a 'folder', a 'git' repository or a 'web' site.",
        "未知类型 {kind!r}：同步源可以是文件夹（folder）、git 仓库（git）或网站（web）。",
    ),
    "source.not_folder": (
        "{location!r} is not a folder on this server: give its absolute path.",
        "{location!r} 不是这台服务器上的文件夹：请给出它的绝对路径。",
    ),
    "source.holds_state": (
        "{location} holds the app's state folder ({state}); follow a folder that does not.",
        "{location} 包含本应用的状态文件夹（{state}）；请跟随不包含它的文件夹。",
    ),
    "source.no_git_location": (
        "Give the repository's path or URL (anything `git clone` accepts).",
        "请给出仓库的路径或 URL（`git clone` 能接受的都可以）。",
    ),
    "source.bad_interval": ("The interval must be a positive number of seconds.", "间隔必须是正的秒数。"),
    "source.empty_pattern": (
        "A pattern is empty: give globs such as '*.md' or 'docs/*'.",
        "有一个匹配模式是空的：请给出 '*.md' 或 'docs/*' 这样的通配符。",
    ),
    "source.kb_followed": (
        "The knowledge base {kb!r} already follows the source {other!r}; give this one a base of its own (two trees "
        "in one base would replace each other's files of the same path).",
        "知识库 {kb!r} 已在跟随同步源 {other!r}；请为这个同步源另建一个知识库（两棵目录树放进同一个知识库，"
        "路径相同的文件会互相替换）。",
    ),
    "source.name_taken": (
        "There is a source named {name!r} already; pick another name or remove that one.",
        "已有名为 {name!r} 的同步源；请换个名字，或先删除那个。",
    ),
    "source.unknown": ("No source named {name!r}.", "没有名为 {name!r} 的同步源。"),
    "source.unknown_listed": (
        "No source named {name!r}; the list of sources shows the names.",
        "没有名为 {name!r} 的同步源；同步源列表里有各个名字。",
    ),
    "source.outside_roots": (
        "{what} is outside the folders sources may follow ({roots}); an administrator sets them with "
        "RAGAPP_SYNC__ALLOWED_ROOTS.",
        "{what} 不在允许跟随的文件夹之内（{roots}）；管理员可用 RAGAPP_SYNC__ALLOWED_ROOTS 设置。",
    ),
    "source.git_option": (
        "{location!r} is not a repository location (it reads like a git option).",
        "{location!r} 不是仓库地址（它看起来像一个 git 选项）。",
    ),
    "source.git_transport": (
        "The git transport {transport!r} is not allowed (allowed: {allowed}; RAGAPP_SYNC__GIT_PROTOCOLS); give an "
        "https, ssh or local address.",
        "不允许使用 git 传输方式 {transport!r}（允许的：{allowed}；RAGAPP_SYNC__GIT_PROTOCOLS）；请给出 https、ssh "
        "或本地地址。",
    ),
    # A git source's sync that failed (ragapp.sync.git); {error} is git's own last line
    "source.no_git": (
        "git is not installed on this server; install it to follow a git repository.",
        "这台服务器没有安装 git；要跟随 git 仓库，请先安装它。",
    ),
    "source.git_slow": (
        "git {command} took over {s:g} s (RAGAPP_SYNC__GIT_TIMEOUT_S); check the repository's address.",
        "git {command} 超过了 {s:g} 秒（RAGAPP_SYNC__GIT_TIMEOUT_S）；请检查仓库地址。",
    ),
    "source.git_failed": ("git {command} failed: {error}", "git {command} 失败：{error}"),
    "source.no_branch": (
        "{location} has no branch {branch!r}; check the source's branch.",
        "{location} 没有分支 {branch!r}；请检查同步源的分支设置。",
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
