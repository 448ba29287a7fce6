package scala.jdk

/**
 * Scala 2.13's `scala.jdk.CollectionConverters` (`asScala`, `asJava`) for the Scala 2.12 build, so the shared
 * sources import one name. The 2.12 assembly relocates `scala.jdk` (Spark 3.5 ships scala-collection-compat,
 * which has a class of this name).
 */
object CollectionConverters extends scala.collection.convert.DecorateAsJava
  with scala.collection.convert.DecorateAsScala
