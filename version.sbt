ThisBuild / version := "0.1.0-SNAPSHOT"
