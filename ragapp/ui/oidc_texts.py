"""The words of an OpenID Connect sign-in on the sign-in page, in English and Chinese: its button, and why a
sign-in through the provider did not happen (``ragapp.serve.oidc`` sends the browser back with the reason)."""

from __future__ import annotations

DEFAULT_LABEL = "your company account"  # settings.oidc.label's default, which has words in Chinese too
_DEFAULT_LABEL_ZH = "公司账号"

# OidcFailure.reason -> (English, Chinese)
REFUSALS: dict[str, tuple[str, str]] = {
    "failed": (
        "Signing in did not work this time: try again in a moment.",
        "这次登录没有成功：请稍后再试。",
    ),
    "unavailable": (
        "The company sign-in service did not answer: try again in a moment, or sign in with a name and password.",
        "公司登录服务没有响应：请稍后再试，或用用户名和密码登录。",
    ),
    "refused": (
        "The company sign-in did not let you in (it was cancelled or refused).",
        "公司登录未能通过（已取消或被拒绝）。",
    ),
    "expired": (
        "That sign-in took too long or was used already: sign in again.",
        "这次登录超时或已被使用：请重新登录。",
    ),
    "invalid": (
        "The company sign-in could not be checked: sign in again.",
        "无法核实这次公司登录：请重新登录。",
    ),
    "no_name": (
        "The company sign-in did not say who you are: ask an administrator.",
        "公司登录没有提供你的身份：请联系管理员。",
    ),
    "no_role": (
        "Your company account is in no group this app gives a role to: ask an administrator.",
        "你的公司账号不属于本应用授予角色的任何组：请联系管理员。",
    ),
    "name": (
        "Your company account's name cannot be used here (a local account has it, or it has characters this "
        "app does not accept): ask an administrator.",
        "你的公司账号名称无法在此使用（已有同名本地账号，或含有本应用不接受的字符）：请联系管理员。",
    ),
}


def sign_in_label(label: str) -> tuple[str, str]:
    """The button's words for the configured ``label``: "Sign in with LABEL"."""
    label_zh = _DEFAULT_LABEL_ZH if label == DEFAULT_LABEL else label
    return f"Sign in with {label}", f"使用{label_zh}登录"
