package io.github.sparkkinesis.simulator

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import io.netty.handler.codec.http.FullHttpRequest

/** One key the simulator accepts: its secret, and the operations denied to it. */
final case class AuthKey(secret: String, denied: Set[String] = Set.empty)

/**
 * Optional request authentication, off unless keys are given (`--auth-keys`, or PUT /_sim/auth): each Kinesis
 * request's SigV4 `Authorization` header must name a known access key id and carry the signature its secret makes,
 * and the operation must not be denied to that key. Answers what AWS answers: UnrecognizedClientException,
 * InvalidSignatureException, AccessDeniedException, MissingAuthenticationTokenException.
 */
final class Auth(val keys: Map[String, AuthKey]) {
  private val Header = """AWS4-HMAC-SHA256 Credential=([^/,\s]+)/([^,\s]+), ?SignedHeaders=([^,\s]+), ?Signature=([0-9a-f]+)""".r

  def check(op: String, request: FullHttpRequest, body: Array[Byte], resource: Option[String]): Option[KinesisError] =
    Option(request.headers().get("Authorization")) match {
      case None => Some(KinesisError("MissingAuthenticationTokenException", "Missing Authentication Token"))
      case Some(Header(keyId, scope, signedHeaders, signature)) =>
        keys.get(keyId) match {
          case None => Some(KinesisError("UnrecognizedClientException",
            "The security token included in the request is invalid."))
          case Some(key) if signature != expectedSignature(key.secret, scope, signedHeaders, request, body) =>
            Some(KinesisError("InvalidSignatureException", "The request signature we calculated does not match " +
              "the signature you provided. Check your AWS Secret Access Key and signing method."))
          case Some(key) if key.denied.contains(op) => Some(KinesisError("AccessDeniedException",
            s"User: arn:aws:iam::${StreamState.Account}:user/$keyId is not authorized to perform: kinesis:$op on " +
              s"resource: ${resource.getOrElse("*")} because no identity-based policy allows the kinesis:$op action"))
          case Some(_) => None
        }
      case Some(_) => Some(KinesisError("IncompleteSignatureException", "The Authorization header is not a SigV4 header."))
    }

  /** SigV4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html). */
  private def expectedSignature(secret: String, scope: String, signedHeaders: String, request: FullHttpRequest,
      body: Array[Byte]): String = {
    val headers = request.headers()
    val canonicalHeaders = signedHeaders.split(';').map { name =>
      s"$name:${headers.getAll(name).toArray.map(_.toString.trim.replaceAll(" +", " ")).mkString(",")}\n"
    }.mkString
    val payloadHash = Option(headers.get("x-amz-content-sha256")).getOrElse(hex(sha256(body)))
    val uri = request.uri()
    val (path, query) = uri.indexOf('?') match {
      case -1 => (uri, "")
      case i => (uri.substring(0, i), uri.substring(i + 1).split('&').sorted.mkString("&"))
    }
    val canonical = Seq(request.method().name(), path, query, canonicalHeaders, signedHeaders, payloadHash).mkString("\n")
    val stringToSign = Seq("AWS4-HMAC-SHA256", headers.get("x-amz-date"), scope, hex(sha256(canonical.getBytes(UTF_8))))
      .mkString("\n")
    val signingKey = scope.split('/').foldLeft(s"AWS4$secret".getBytes(UTF_8))((key, part) => hmac(key, part))
    hex(hmac(signingKey, stringToSign))
  }

  private def sha256(bytes: Array[Byte]): Array[Byte] = MessageDigest.getInstance("SHA-256").digest(bytes)

  private def hmac(key: Array[Byte], data: String): Array[Byte] = {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(new SecretKeySpec(key, "HmacSHA256"))
    mac.doFinal(data.getBytes(UTF_8))
  }

  private def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString
}

object Auth {
  /** `AKID=secret,AKID2=secret2`, as `--auth-keys` takes it. */
  def parse(spec: String): Auth = new Auth(spec.split(',').filter(_.nonEmpty).map { kv =>
    kv.split("=", 2) match {
      case Array(id, secret) if id.nonEmpty && secret.nonEmpty => id -> AuthKey(secret)
      case _ => throw new IllegalArgumentException(s"--auth-keys takes KEY_ID=SECRET,..., got '$kv'")
    }
  }.toMap)
}
